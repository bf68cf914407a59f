import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { INCIDENT_ID } from '../../src/host/index.ts';
import { FUNCTIONS } from '../../src/protocol/index.ts';
import { baggage, startTestService, type TestService } from '../support/service.ts';

let svc: TestService;
beforeAll(async () => {
  svc = await startTestService();
});
afterAll(async () => {
  await svc.close();
});

const PRIVATE = FUNCTIONS.filter((fn) => fn.access === 'admin').map((fn) => fn.path);

function expectErrorEnvelope(reply: { statusCode: number; body: Record<string, unknown> }, code: number) {
  expect(reply.statusCode).toBe(code);
  expect(reply.body.status).toBe('error');
  expect(typeof reply.body.errorMessage).toBe('string');
  expect((reply.body.errorMessage as string).length).toBeGreaterThan(10);
  expect(reply.body.errorData).toBeTypeOf('object');
  expect(reply.body).not.toHaveProperty('value');
}

describe('authentication and routing', () => {
  const path = 'svc/tracker/private/workflow_state_cache_get_by_team';

  it('401 without an Authorization header', async () => {
    const reply = await svc.call(path, { team_id: 'T' }, 'none');
    expectErrorEnvelope(reply, 401);
    expect(reply.body.errorData).toMatchObject({ reason: 'unauthenticated' });
  });

  it.each([
    ['an unknown token', () => 'Bearer fsu_not-a-real-token'],
    ['an unknown scheme', () => `Token ${svc.tokens.user}`],
    // The shared tokens' own rule (a member's token acts by its role on either scheme): their pass keeps them.
    ['the admin token presented as a user', () => `Bearer ${svc.sharedTokens.admin}`],
    ['the user token presented as admin', () => `Admin ${svc.sharedTokens.user}`],
    ['a header with no token', () => 'Bearer'],
  ])('401 with %s, and the token is not echoed', async (_name, header) => {
    const reply = await svc.raw(`/api/run/${path}`, {
      body: JSON.stringify({ args: { baggage: baggage(), team_id: 'T' } }),
      headers: { 'content-type': 'application/json', authorization: header() },
    });
    expectErrorEnvelope(reply, 401);
    for (const token of [svc.tokens.user, svc.tokens.admin, svc.sharedTokens.user, svc.sharedTokens.admin])
      expect(JSON.stringify(reply.body)).not.toContain(token);
  });

  it.each(PRIVATE)('403 for a user token on the operator function %s', async (fn) => {
    const reply = await svc.call(fn, {}, 'user');
    expectErrorEnvelope(reply, 403);
    expect(reply.body.errorData).toMatchObject({ reason: 'forbidden' });
  });

  it('404 for an unknown function and for a path outside /api/run', async () => {
    const unknown = await svc.call('svc/nope/public/thing', {});
    expectErrorEnvelope(unknown, 404);
    expect(unknown.body.errorData).toMatchObject({ reason: 'unknown_function' });
    const outside = await svc.raw('/elsewhere', { method: 'GET' });
    expectErrorEnvelope(outside, 404);
  });

  it.each(['GET', 'PUT', 'DELETE', 'PATCH'])('405 for %s, with Allow: POST', async (method) => {
    const reply = await svc.raw(`/api/run/${path}`, {
      method,
      headers: { authorization: `Admin ${svc.tokens.admin}` },
    });
    expectErrorEnvelope(reply, 405);
    expect(reply.headers.allow).toBe('POST');
  });

  it('413 for a body over 8 MiB, before any work', async () => {
    const big = JSON.stringify({ args: { baggage: baggage(), team_id: 'x'.repeat(9 * 1024 * 1024) } });
    const reply = await svc.raw(`/api/run/${path}`, {
      body: big,
      headers: { 'content-type': 'application/json', authorization: `Admin ${svc.tokens.admin}` },
    });
    expectErrorEnvelope(reply, 413);
    expect(reply.body.errorData).toMatchObject({ reason: 'body_too_large' });
  });

  it('accepts a body sent without a JSON content type, and ignores format: "json"', async () => {
    const reply = await svc.raw(`/api/run/${path}`, {
      body: JSON.stringify({ args: { baggage: baggage(), team_id: 'T' }, format: 'json' }),
      headers: { 'content-type': 'text/plain', authorization: `Admin ${svc.tokens.admin}` },
    });
    expect(reply.statusCode).toBe(200);
    expect(reply.body.status).toBe('success');
  });
});

/** Bodies that are wrong in every way a client or a person at a shell can get them wrong. */
const MALFORMED_BODIES: [string, string | undefined][] = [
  ['an empty body', ''],
  ['no body at all', undefined],
  ['non-JSON', 'args=1&x=2'],
  ['truncated JSON', '{"args": {"baggage": '],
  ['a JSON string', '"args"'],
  ['a JSON array', '[{"args": {}}]'],
  ['null', 'null'],
  ['an empty object (missing args)', '{}'],
  ['args as a number', '{"args": 5}'],
  ['args as an array', '{"args": []}'],
  ['args as null', '{"args": null}'],
  ['a prototype-pollution key', '{"args": {"__proto__": {"admin": true}}}'],
  ['extra nesting', JSON.stringify({ args: { args: { baggage: baggage() } } })],
  ['an unknown top-level field', JSON.stringify({ args: { baggage: baggage() }, extra: 1 })],
  ['missing baggage', JSON.stringify({ args: {} })],
  ['baggage of the wrong type', JSON.stringify({ args: { baggage: 'trace' } })],
  ['baggage missing trace_id', JSON.stringify({ args: { baggage: { traffic_type: 'external' } } })],
];

describe.each(FUNCTIONS.map((fn) => [fn.path, fn] as const))('malformed input to %s', (path, fn) => {
  it.each(MALFORMED_BODIES)('%s → 400 error envelope', async (_name, body) => {
    const reply = await svc.raw(`/api/run/${path}`, {
      body,
      headers: {
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
        authorization: `Admin ${svc.tokens.admin}`,
      },
    });
    expectErrorEnvelope(reply, 400);
    expect(reply.body.errorData).toMatchObject({ reason: 'invalid_request' });
  });

  it('every field of the wrong type → 400 naming each field', async () => {
    const fields = Object.keys(
      (fn.args as unknown as { shape?: Record<string, unknown> }).shape ?? {},
    ).filter((key) => key !== 'baggage');
    const wrong = Object.fromEntries(fields.map((key) => [key, { nested: [[1]] }]));
    const reply = await svc.call(path, wrong);
    // `payload` is unknown-typed in two webhook functions: the schema accepts it, the function then refuses it.
    const onlyUnknownTyped = fields.every((key) => key === 'payload');
    expectErrorEnvelope(reply, onlyUnknownTyped ? 422 : 400);
    if (!onlyUnknownTyped) {
      const named = ((reply.body.errorData as { issues: { path: unknown[] }[] }).issues ?? []).map(
        (i) => i.path[0],
      );
      for (const key of fields.filter(
        (k) => k !== 'payload' && k !== 'backend_config' && k !== 'service_config',
      )) {
        expect(named, `${path} should name ${key}`).toContain(key);
      }
    }
  });

  it('an unknown field → 400', async () => {
    const reply = await svc.call(path, { definitely_not_a_field: true });
    expectErrorEnvelope(reply, 400);
    expect(JSON.stringify(reply.body.errorData)).toContain('definitely_not_a_field');
  });
});

describe('the service after all that', () => {
  it('still answers and never answered 500', async () => {
    const reply = await svc.call('svc/tracker/private/workflow_state_cache_get_by_team', { team_id: 'T' });
    expect(reply.statusCode).toBe(200);
    expect(svc.logs.some((line) => JSON.parse(line).status === 500)).toBe(false);
  });
});

describe('a bug in the service', () => {
  it('answers 500 with an incident id in the one form, and its log has the error under that id', async () => {
    // Its own service: the damage below would fail every other test of the file.
    const damaged = await startTestService();
    try {
      const path = 'svc/tracker/private/workflow_state_cache_get_by_team';
      expect((await damaged.call(path, { team_id: 'T' })).statusCode).toBe(200);
      // The database changed under the running service (another process, a bad restore): a table it reads is gone.
      damaged.exec('DROP TABLE workflow_states');

      const reply = await damaged.call(path, { team_id: 'T' });
      expectErrorEnvelope(reply, 500);
      expect(reply.body.errorData).toMatchObject({ reason: 'internal' });
      const incident = reply.body.errorData!.incident as string;
      expect(incident).toMatch(INCIDENT_ID);
      expect(reply.body.errorMessage).toBe(
        `Internal error (incident ${incident}); the service log has the details.`,
      );
      expect(JSON.stringify(reply.body)).not.toContain('workflow_states');

      const logged = damaged.logs.map((line) => JSON.parse(line)).find((line) => line.incident === incident);
      expect(logged.err.message).toContain('workflow_states');
      expect(logged.fn).toBe(path);
    } finally {
      await damaged.close();
    }
  });
});
