import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MAX_JSON_DEPTH, SYNC_CALL_LIMITS } from '../../src/protocol/index.ts';
import { fileEntry } from '../support/flows.ts';
import { baggage, startTestService, type TestService } from '../support/service.ts';

let svc: TestService;
beforeAll(async () => {
  svc = await startTestService();
});
afterAll(async () => {
  await svc.close();
});

const SYNC_BATCH = 'svc/flow_def/action/sync_batch/run';
const SYNC_INTERNAL = 'svc/flow_def/private/sync_internal';

/** A body written by hand: JSON.stringify itself cannot write what an attacker can. */
function post(path: string, body: string) {
  return svc.raw(`/api/run/${path}`, {
    body,
    headers: { 'content-type': 'application/json', authorization: `Admin ${svc.tokens.admin}` },
  });
}

const nested = (depth: number) => '['.repeat(depth) + ']'.repeat(depth);

describe('JSON nested deeper than the service reads', () => {
  const args = (rest: string) => `{"args":{"baggage":${JSON.stringify(baggage())},${rest}}}`;

  it.each([
    [
      'a z.json() field',
      'svc/repo_config/public/update',
      args(`"owner":"acme","name":"app","backend_config":${nested(20_000)}`),
      'args.backend_config',
    ],
    [
      'a file of a flow',
      SYNC_BATCH,
      args(
        `"repo_owner":"acme","repo_name":"app","flows":[{"flow_path":"flows/a","files":${nested(20_000)}}]`,
      ),
      'args.flows.0.files',
    ],
    [
      'a field of objects',
      'svc/repo_config/public/update',
      args(`"owner":"acme","name":"app","service_config":${'{"a":'.repeat(20_000)}1${'}'.repeat(20_000)}`),
      'args.service_config.a.a.a.a.a.a',
    ],
  ])('in %s is a 400 naming the field, and the service still answers', async (_where, path, body, field) => {
    const reply = await post(path, body);
    expect(reply.statusCode).toBe(400);
    expect(reply.body.errorData).toMatchObject({
      reason: 'invalid_request',
      issues: [{ path: field.split('.').map((key) => (/^\d+$/.test(key) ? Number(key) : key)) }],
    });
    expect(reply.body.errorMessage).toContain(field);
    expect(reply.body.errorMessage).toContain(String(MAX_JSON_DEPTH));

    const after = await svc.call('svc/repo_config/public/update', {
      owner: 'acme',
      name: 'app',
      editor: 'vim',
    });
    expect(after.statusCode).toBe(200);
  });

  it(`reads a body nested exactly ${MAX_JSON_DEPTH} deep, strings with brackets and escaped quotes included`, async () => {
    // The body is depth 1, args 2, backend_config 3: 62 more levels fit.
    const backend = `[{"k":"]]]\\"[[[","v":${nested(MAX_JSON_DEPTH - 4)}}]`;
    const reply = await post(
      'svc/repo_config/public/update',
      args(`"owner":"acme","name":"deep","backend_config":${backend}`),
    );
    expect(reply.statusCode).toBe(200);
    const tooDeep = await post(
      'svc/repo_config/public/update',
      args(`"owner":"acme","name":"deep","backend_config":[${backend}]`),
    );
    expect(tooDeep.statusCode).toBe(400);
  });
});

describe('caps per sync call', () => {
  const stored = () => svc.read<{ n: number }>('SELECT count(*) AS n FROM flows')[0]!.n;

  it(`refuses a sync_batch of 60,000 flows with 413 and the cap, and writes nothing`, async () => {
    const before = stored();
    const flows = Array.from({ length: 60_000 }, (_, i) => ({ flow_path: `flows/f${i}`, files: [] }));
    const reply = await svc.call(SYNC_BATCH, { repo_owner: 'acme', repo_name: 'many', flows });
    expect(reply.statusCode).toBe(413);
    expect(reply.body.errorData).toEqual({
      reason: 'body_too_large',
      limit: 'flows',
      max: SYNC_CALL_LIMITS.flows,
      got: 60_000,
    });
    expect(reply.body.errorMessage).toContain('1,000 flows');
    expect(stored()).toBe(before);
    expect(svc.read('SELECT id FROM repos WHERE name = ?', 'many')).toEqual([]);
  });

  it('refuses too many files, in sync_batch and in sync_internal', async () => {
    const files = Array.from({ length: SYNC_CALL_LIMITS.files + 1 }, (_, i) => fileEntry(`f${i}`, ''));
    const batch = await svc.call(SYNC_BATCH, {
      repo_owner: 'acme',
      repo_name: 'files',
      flows: [
        { flow_path: 'flows/a', files: files.slice(0, 10) },
        { flow_path: 'flows/b', files: files.slice(10) },
      ],
    });
    expect(batch.statusCode).toBe(413);
    expect(batch.body.errorData).toMatchObject({
      limit: 'files',
      max: SYNC_CALL_LIMITS.files,
      got: SYNC_CALL_LIMITS.files + 1,
    });

    const created = await svc.call(SYNC_BATCH, {
      repo_owner: 'acme',
      repo_name: 'files',
      flows: [{ flow_path: 'flows/a', files: [fileEntry('one', '1')] }],
    });
    const repoId = (created.body.value as { repo_id: string }).repo_id;
    const internal = await svc.call(SYNC_INTERNAL, { repo_id: repoId, flow_path: 'flows/a', files });
    expect(internal.statusCode).toBe(413);
    expect(internal.body.errorData).toMatchObject({ limit: 'files', got: SYNC_CALL_LIMITS.files + 1 });
    expect(
      svc.read(
        'SELECT path FROM flow_files ff JOIN flows f ON f.id = ff.flow_id WHERE f.repo_id = ?',
        repoId,
      ),
    ).toEqual([{ path: 'one' }]);
  });

  it('refuses more content than the cap, counted in UTF-8 bytes', async () => {
    // Seven files of 1 MiB (é is 2 bytes): 7 MiB of content in a body still under the 8 MiB body limit.
    const content = 'é'.repeat(512 * 1024);
    const files = Array.from({ length: 7 }, (_, i) => fileEntry(`f${i}`, content));
    const reply = await svc.call(SYNC_BATCH, {
      repo_owner: 'acme',
      repo_name: 'content',
      flows: [{ flow_path: 'flows/a', files }],
    });
    expect(reply.statusCode).toBe(413);
    expect(reply.body.errorData).toMatchObject({
      limit: 'contentBytes',
      max: SYNC_CALL_LIMITS.contentBytes,
      got: 7 * 1024 * 1024,
    });
    expect(svc.read('SELECT id FROM repos WHERE name = ?', 'content')).toEqual([]);
  });
});
