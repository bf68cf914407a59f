import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sha256 } from '../support/flows.ts';
import { baggage, startTestService, type TestService } from '../support/service.ts';

let svc: TestService;
beforeAll(async () => {
  svc = await startTestService();
});
afterAll(async () => {
  await svc.close();
});

describe('the service log', () => {
  it('has one line per call with the trace id, and no token or key secret, whatever happened', async () => {
    const secret = 'lin_api_LEAKCHECK_0123456789';
    const trace = baggage();
    await svc.call('svc/swarm_api_key/private/add_activity', {
      baggage: trace,
      api_key_tid: 't',
      ts: 1,
      payload: {
        type: 'key-created',
        hash: sha256(secret),
        name: 'n',
        prefix_4: 'lin_',
        suffix_4: '6789',
        user_id: 'u',
      },
    });
    await svc.call(
      'svc/tracker/action/users/viewer/run',
      { api_key: { secret, type: 'personal-api-key' } },
      'user',
    );
    await svc.call('svc/tracker/action/users/viewer/run', {
      api_key: { secret: `${secret}-wrong`, type: 'personal-api-key' },
    });
    await svc.raw('/api/run/svc/slug/public/log', {
      body: `{"args": {"secret": "${secret}"`,
      headers: { authorization: `Bearer ${svc.tokens.user}` },
    });
    await svc.raw('/api/run/svc/slug/public/log', {
      body: '{}',
      headers: { authorization: `Bearer ${secret}` },
    });

    const lines = svc.logs.map((line) => JSON.parse(line) as Record<string, unknown>);
    const calls = lines.filter((line) => line.msg === 'call');
    expect(calls.length).toBeGreaterThanOrEqual(5);
    expect(calls.find((line) => line.trace_id === trace.trace_id)).toMatchObject({
      fn: 'svc/swarm_api_key/private/add_activity',
      status: 200,
    });
    const all = svc.logs.join('\n');
    for (const leaked of [secret, svc.tokens.user, svc.tokens.admin]) expect(all).not.toContain(leaked);
  });
});
