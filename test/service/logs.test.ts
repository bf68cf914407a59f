import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { sha256 } from '../support/flows.ts';
import { startTestService, type TestService } from '../support/service.ts';

let svc: TestService;
beforeEach(async () => {
  svc = await startTestService();
});
afterEach(async () => {
  await svc.close();
});

const SECRET = 'lin_api_0123456789abcdefSECRET';

function keyCreated(secret = SECRET) {
  return {
    api_key_tid: 'tid-1',
    ts: 1_700_000_000_000,
    payload: {
      type: 'key-created',
      hash: sha256(secret),
      name: 'laptop',
      prefix_4: secret.slice(0, 4),
      suffix_4: secret.slice(-4),
      user_id: 'user-1',
    },
  };
}

describe('add_activity', () => {
  it('logs the activity with the trace id and registers the key by hash, never the secret', async () => {
    const reply = await svc.call('svc/swarm_api_key/private/add_activity', keyCreated());
    expect(reply.statusCode).toBe(200);
    expect(reply.body.value).toMatchObject({ registered: true });
    const [log] = svc.read('SELECT * FROM key_activity_log');
    expect(log).toMatchObject({
      api_key_tid: 'tid-1',
      type: 'key-created',
      hash: sha256(SECRET),
      ts: 1_700_000_000_000,
    });
    expect((log as { trace_id: string }).trace_id).toMatch(/^[0-9a-f-]{36}$/);
    expect(svc.read('SELECT hash, user_id, prefix_4, suffix_4 FROM api_keys')).toEqual([
      { hash: sha256(SECRET), user_id: 'user-1', prefix_4: 'lin_', suffix_4: 'CRET' },
    ]);
    expect(JSON.stringify(svc.read('SELECT * FROM api_keys'))).not.toContain(SECRET);
  });

  it('logs a second key-created for the same key without registering it twice', async () => {
    await svc.call('svc/swarm_api_key/private/add_activity', keyCreated());
    const again = await svc.call('svc/swarm_api_key/private/add_activity', keyCreated());
    expect(again.body.value).toMatchObject({ registered: false });
    expect(svc.read('SELECT id FROM key_activity_log')).toHaveLength(2);
    expect(svc.read('SELECT hash FROM api_keys')).toHaveLength(1);
  });

  it('moves a key to the user a later key-created names (a key registered to no tracker user, then to its owner)', async () => {
    await svc.call('svc/swarm_api_key/private/add_activity', {
      ...keyCreated(),
      payload: { ...keyCreated().payload, user_id: 'root' },
    });
    const moved = await svc.call('svc/swarm_api_key/private/add_activity', keyCreated());
    expect(moved.body.value).toMatchObject({ registered: true });
    expect(svc.read('SELECT user_id FROM api_keys')).toEqual([{ user_id: 'user-1' }]);
  });

  it('refuses a payload type other than key-created and a hash that is not a SHA-256', async () => {
    const wrongType = keyCreated();
    (wrongType.payload as { type: string }).type = 'key-deleted';
    expect((await svc.call('svc/swarm_api_key/private/add_activity', wrongType)).statusCode).toBe(400);
    const plainSecret = keyCreated();
    plainSecret.payload.hash = SECRET;
    const reply = await svc.call('svc/swarm_api_key/private/add_activity', plainSecret);
    expect(reply.statusCode).toBe(400);
    expect(JSON.stringify(reply.body)).not.toContain(SECRET);
    expect(svc.read('SELECT * FROM key_activity_log')).toEqual([]);
  });
});

describe('slug log', () => {
  it('appends the event for a user caller', async () => {
    const reply = await svc.call(
      'svc/slug/public/log',
      {
        slug: 'fix-login',
        ts: 42,
        type: 'worktree',
        payload: { slug: 'fix-login', type: 'init-worktree-created' },
      },
      'user',
    );
    expect(reply.statusCode).toBe(200);
    const id = (reply.body.value as { id: number }).id;
    expect(svc.read('SELECT id, slug, type, payload_slug, payload_type, ts FROM slug_log')).toEqual([
      {
        id,
        slug: 'fix-login',
        type: 'worktree',
        payload_slug: 'fix-login',
        payload_type: 'init-worktree-created',
        ts: 42,
      },
    ]);
  });
});
