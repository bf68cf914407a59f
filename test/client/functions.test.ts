import { createCipheriv, randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createClient, RemoteError, type RemoteClient } from '../../src/client/index.ts';
import { FUNCTIONS } from '../../src/protocol/index.ts';
import { fileEntry, sha256 } from '../support/flows.ts';
import { startTestService, type TestService } from '../support/service.ts';

let svc: TestService;
let user: RemoteClient;
let admin: RemoteClient;
const SECRET = 'lin_api_client_test_0123456789';
const apiKey = { secret: SECRET, type: 'personal-api-key' as const };

beforeAll(async () => {
  svc = await startTestService();
  user = createClient({ baseUrl: svc.url, auth: { userToken: svc.tokens.user } });
  admin = createClient({ baseUrl: svc.url, auth: { adminToken: svc.tokens.admin } });
});
afterAll(async () => {
  await user.close();
  await admin.close();
  await svc.close();
});

/** Every function, called through its generated method, in an order where each builds on the last. */
describe('the client against the embedded service: all 20 functions', () => {
  const called = new Set<string>();
  const track = (path: string) => called.add(path);

  it('1 add_activity registers the API key the tracker actions need', async () => {
    const value = await admin.apiKey.addActivity({
      api_key_tid: 'tid-1',
      ts: Date.now(),
      payload: {
        type: 'key-created',
        hash: sha256(SECRET),
        name: 'laptop',
        prefix_4: 'lin_',
        suffix_4: '6789',
        user_id: 'user-1',
      },
    });
    expect(value.registered).toBe(true);
    track('svc/swarm_api_key/private/add_activity');
  });

  it('5, 6 webhooks feed the tracker store', async () => {
    for (const [id, identifier, parentId] of [
      ['i-1', 'ENG-1', null],
      ['i-2', 'ENG-2', 'i-1'],
    ] as const) {
      const stored = await admin.webhooks.storeWebhook({
        payload: {
          action: 'create',
          type: 'Issue',
          data: { id, identifier, title: `Title ${identifier}`, teamId: 't-1', parentId },
        },
        team: 't-1',
        status: 'received',
      });
      expect(stored.applied).toBe(true);
    }
    await admin.webhooks.storeWebhook({
      payload: { action: 'create', type: 'Project', data: { id: 'p-1', name: 'Launch' } },
      team: 't-1',
      status: 'received',
    });
    const attachment = await admin.webhooks.handleAttachmentUpdate({
      payload: {
        action: 'create',
        type: 'Attachment',
        data: { id: 'a-1', issueId: 'i-1', url: 'https://x.test' },
      },
    });
    expect(attachment).toEqual({ attachment_id: 'a-1', issue_id: 'i-1', removed: false });
    track('wh/tracker/private/store_webhook');
    track('wh/tracker/private/handle_attachment_update');
  });

  it('2, 3, 12, 13, 17 tracker actions', async () => {
    const found = await user.tracker.searchIssues({
      api_key: apiKey,
      query: 'title',
      pagination: { first: 1 },
    });
    expect(found.nodes).toHaveLength(1);
    expect(found.pageInfo.hasNextPage).toBe(true);
    const rest = await user.tracker.searchIssues({
      api_key: apiKey,
      query: 'title',
      pagination: { first: 1, after: found.pageInfo.endCursor ?? undefined },
    });
    expect([...found.nodes, ...rest.nodes].map((n) => n.identifier).sort()).toEqual(['ENG-1', 'ENG-2']);
    const batch = await user.tracker.batchIssues({ api_key: apiKey, identifiers: ['ENG-1', 'ENG-9'] });
    expect(batch.missing).toEqual(['ENG-9']);
    expect(batch.nodes[0]?.attachments).toHaveLength(1);
    const projects = await user.tracker.listProjects({ api_key: apiKey });
    expect(projects.nodes.map((p) => p.id)).toEqual(['p-1']);
    expect(await user.tracker.getProject({ api_key: apiKey, id: 'p-1' })).toMatchObject({ name: 'Launch' });
    expect(await user.tracker.viewer({ api_key: apiKey })).toEqual({ id: 'user-1', name: null, email: null });
    for (const path of [
      'svc/tracker/action/issues/search/run',
      'svc/tracker/action/issues/batch/run',
      'svc/tracker/action/projects/list/run',
      'svc/tracker/action/projects/get/run',
      'svc/tracker/action/users/viewer/run',
    ]) {
      track(path);
    }
  });

  it('11, 20, 16 caches', async () => {
    const states = [{ id: 's-1', name: 'Todo', normalized_name: 'todo' }];
    await admin.tracker.workflowStateCacheUpsert({ team_id: 't-1', states });
    expect(await admin.tracker.workflowStateCacheGetByTeam({ team_id: 't-1' })).toMatchObject({ states });
    expect(
      await admin.tracker.keyCacheGetByUuid({ tracker_task_uuid: 'i-2', tracker_team_uuid: 't-1' }),
    ).toEqual({
      task_key: 'ENG-2',
      tracker_task_uuid: 'i-2',
      tracker_team_uuid: 't-1',
    });
    track('svc/tracker/private/workflow_state_cache_upsert');
    track('svc/tracker/private/workflow_state_cache_get_by_team');
    track('svc/tracker/private/key_cache_get_by_uuid');
  });

  it('14, 10, 18 tasks', async () => {
    const synced = await user.task.syncTask({
      task_key: 'ENG-1',
      repo_remote_url: 'git@x:a/b.git',
      user_email: 'a@b.co',
    });
    expect(synced.synced).toEqual(['ENG-2']);
    const updated = await user.task.update({ task_key: 'ENG-1', status: 'todo', recursive: true });
    expect(updated.updated.sort()).toEqual(['ENG-1', 'ENG-2']);
    expect(await admin.task.getByTaskKey({ task_key: 'ENG-2', team_external_id: 't-1' })).toMatchObject({
      status: 'Todo',
      parent_key: 'ENG-1',
    });
    track('svc/task/action/sync_task/run');
    track('svc/task/action/update/run');
    track('svc/task/private/get_by_task_key');
  });

  it('8, 9, 19 flows', async () => {
    const batch = await user.flowDef.syncBatch({
      repo_owner: 'acme',
      repo_name: 'app',
      flows: [{ flow_path: 'flows/a', files: [fileEntry('main.yaml', 'v1')] }],
    });
    expect(batch).toMatchObject({ files_created: 1, flows_synced: 1, skipped: false });
    const file = batch.files?.[0];
    expect(file).toBeDefined();
    const internal = await admin.flowDef.syncInternal({
      repo_id: String(batch.repo_id),
      flow_path: 'flows/b',
      files: [fileEntry('x.yaml', 'x')],
    });
    expect(internal.files_created).toBe(1);
    const updatedFile = await user.flowDef.updateFile({ fileId: file!.id, content: 'v2' });
    expect(updatedFile).toMatchObject({ hash: sha256('v2') });
    track('svc/flow_def/action/sync_batch/run');
    track('svc/flow_def/private/sync_internal');
    track('svc/flow_def/public/update_file');
  });

  it('4, 7, 15 slug log, repo config, decrypt', async () => {
    const logged = await user.slug.log({
      slug: 'wt-1',
      type: 'init-worktree-created',
      ts: Date.now(),
      payload: { slug: 'wt-1', type: 'init-worktree-created' },
    });
    expect(logged.id).toBeGreaterThan(0);
    expect(await user.repoConfig.update({ owner: 'acme', name: 'app', editor: 'code' })).toMatchObject({
      editor: 'code',
    });
    const key = randomBytes(32);
    const iv = randomBytes(12);
    const cipher = createCipheriv('aes-256-gcm', key, iv);
    const ciphertext = Buffer.concat([cipher.update('hello', 'utf8'), cipher.final()]);
    const plain = await user.crypto.decryptAesGcm({
      ciphertext: ciphertext.toString('base64'),
      iv: iv.toString('base64'),
      key: key.toString('base64'),
      tag: cipher.getAuthTag().toString('base64'),
    });
    expect(plain.plaintext).toBe('hello');
    track('svc/slug/public/log');
    track('svc/repo_config/public/update');
    track('crypto/decrypt_aes_gcm/run');
  });

  it('called every function in the table', () => {
    expect([...called].sort()).toEqual(FUNCTIONS.map((fn) => fn.path).sort());
  });
});

describe('client errors', () => {
  it('a refused call is a RemoteError with code, message, reason, path and trace id', async () => {
    const error = await user.flowDef
      .updateFile({ fileId: 'no-such-file', content: 'x' })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(RemoteError);
    const remote = error as RemoteError;
    expect(remote).toMatchObject({
      statusCode: 422,
      path: 'svc/flow_def/public/update_file',
      reason: 'refused',
    });
    expect(remote.traceId).toMatch(/^[0-9a-f-]{36}$/);
    expect(remote.message).toContain('No file with id no-such-file');
    expect(remote.message.split('\n')).toHaveLength(1);
  });

  it('a user token on an operator function is a 403 RemoteError', async () => {
    const error = await user.tracker.workflowStateCacheGetByTeam({ team_id: 't' }).catch((e: unknown) => e);
    expect(error).toMatchObject({ statusCode: 403, reason: 'forbidden' });
  });

  it('uses the caller baggage when given, and logs its trace id', async () => {
    await user.repoConfig.update({
      owner: 'acme',
      name: 'app',
      baggage: { trace_id: 'my-trace-42', traffic_type: 'test' },
    });
    expect(svc.logs.some((line) => line.includes('"trace_id":"my-trace-42"'))).toBe(true);
  });
});
