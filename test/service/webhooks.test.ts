import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { startTestService, type TestService } from '../support/service.ts';
import { apiKey, deliver, issueCreated, registerApiKey } from '../support/tracker.ts';

const STORE = 'wh/tracker/private/store_webhook';
const ATTACH = 'wh/tracker/private/handle_attachment_update';
const BATCH = 'svc/tracker/action/issues/batch/run';

let svc: TestService;
beforeEach(async () => {
  svc = await startTestService();
  await registerApiKey(svc);
});
afterEach(async () => {
  await svc.close();
});

async function issue(identifier: string) {
  const reply = await svc.call(BATCH, { api_key: apiKey(), identifiers: [identifier] }, 'user');
  return (reply.body.value as { nodes: Record<string, unknown>[] }).nodes[0];
}

describe('store_webhook', () => {
  it('stores an Issue create, applies an update, and records every delivery with its trace id', async () => {
    const created = await deliver(
      svc,
      issueCreated({
        id: 'i-1',
        identifier: 'ENG-1',
        title: 'Crash on start',
        priority: 2,
        state: { name: 'Todo' },
      }),
    );
    expect(created.body.value).toMatchObject({ type: 'Issue', action: 'create', applied: true });
    expect(await issue('ENG-1')).toMatchObject({
      id: 'i-1',
      title: 'Crash on start',
      priority: 2,
      priority_label: 'High',
      state_name: 'Todo',
      team_id: 'team-eng',
      attachments: [],
    });

    await deliver(svc, {
      action: 'update',
      type: 'Issue',
      data: { id: 'i-1', identifier: 'ENG-1', title: 'Crash on start-up', state: { name: 'In Progress' } },
    });
    expect(await issue('ENG-1')).toMatchObject({ title: 'Crash on start-up', state_name: 'In Progress' });

    const events = svc.read<{
      type: string;
      action: string;
      applied: number;
      team: string;
      trace_id: string;
    }>('SELECT type, action, applied, team, trace_id FROM webhook_events ORDER BY id');
    expect(events.map(({ action, applied }) => [action, applied])).toEqual([
      ['create', 1],
      ['update', 1],
    ]);
    expect(events[0]!.trace_id).toMatch(/^[0-9a-f-]{36}$/);
  });

  it('uses the team argument when the issue names no team, and removes an issue on remove', async () => {
    await deliver(
      svc,
      { action: 'create', type: 'Issue', data: { id: 'i-2', identifier: 'OPS-2', title: 'x' } },
      'team-ops',
    );
    expect(await issue('OPS-2')).toMatchObject({ team_id: 'team-ops' });
    await deliver(svc, { action: 'remove', type: 'Issue', data: { id: 'i-2' } });
    expect(await issue('OPS-2')).toBeUndefined();
  });

  it('stores Project and User records and keeps other types only as events', async () => {
    await deliver(svc, {
      action: 'create',
      type: 'Project',
      data: { id: 'p-1', name: 'Launch', teamIds: ['team-eng'], state: 'started' },
    });
    await deliver(svc, {
      action: 'create',
      type: 'User',
      data: { id: 'user-1', name: 'Ada', email: 'ada@example.com' },
    });
    const comment = await deliver(svc, {
      action: 'create',
      type: 'Comment',
      data: { id: 'c-1', body: 'hi' },
    });
    expect(comment.body.value).toMatchObject({ type: 'Comment', applied: false });
    expect(svc.read('SELECT id, name, team_ids FROM tracker_projects')).toEqual([
      { id: 'p-1', name: 'Launch', team_ids: '["team-eng"]' },
    ]);
    expect(svc.read('SELECT id, name, email FROM tracker_users')).toEqual([
      { id: 'user-1', name: 'Ada', email: 'ada@example.com' },
    ]);
    expect(svc.read('SELECT type, applied FROM webhook_events WHERE type = ?', 'Comment')).toEqual([
      { type: 'Comment', applied: 0 },
    ]);
  });

  it.each([
    ['a payload that is not an object', 'just text'],
    ['an unknown action', { action: 'explode', type: 'Issue', data: { id: 'i-9' } }],
    ['data without an id', { action: 'create', type: 'Issue', data: {} }],
    ['an Issue without an identifier', { action: 'create', type: 'Issue', data: { id: 'i-9', title: 'x' } }],
  ])('refuses %s with 422, naming the field, and stores nothing', async (_name, payload) => {
    const reply = await svc.call(STORE, { payload, team: 'team-eng', status: 'received' });
    expect(reply.statusCode).toBe(422);
    expect(reply.body.status).toBe('error');
    expect(reply.body.errorMessage).toMatch(/args\.payload/);
    expect(svc.read('SELECT id FROM webhook_events')).toEqual([]);
    expect(svc.read('SELECT id FROM tracker_issues')).toEqual([]);
  });

  it('is refused to a user token: webhooks are for the operator', async () => {
    const reply = await svc.call(
      STORE,
      { payload: issueCreated({ id: 'i', identifier: 'E-1', title: 't' }), team: '', status: '' },
      'user',
    );
    expect(reply.statusCode).toBe(403);
  });
});

describe('handle_attachment_update', () => {
  const attachment = (action: string, issueId = 'i-1') => ({
    action,
    type: 'Attachment',
    data: { id: 'a-1', issueId, title: 'Design doc', url: 'https://example.com/doc' },
  });

  it('records an attachment on its issue, updates it, and removes it', async () => {
    await deliver(svc, issueCreated({ id: 'i-1', identifier: 'ENG-1', title: 'With a doc' }));
    const reply = await svc.call(ATTACH, { payload: attachment('create') });
    expect(reply.body.value).toEqual({ attachment_id: 'a-1', issue_id: 'i-1', removed: false });
    expect((await issue('ENG-1'))?.attachments).toEqual([
      { id: 'a-1', title: 'Design doc', url: 'https://example.com/doc' },
    ]);

    await svc.call(ATTACH, {
      payload: { ...attachment('update'), data: { id: 'a-1', issueId: 'i-1', title: 'Spec' } },
    });
    expect((await issue('ENG-1'))?.attachments).toEqual([{ id: 'a-1', title: 'Spec', url: null }]);

    const removed = await svc.call(ATTACH, { payload: attachment('remove') });
    expect(removed.body.value).toMatchObject({ removed: true });
    expect((await issue('ENG-1'))?.attachments).toEqual([]);
  });

  it('refuses an attachment for an issue it does not know, and a payload of another type', async () => {
    const unknown = await svc.call(ATTACH, { payload: attachment('create', 'i-404') });
    expect(unknown.statusCode).toBe(422);
    expect(unknown.body.errorMessage).toContain('i-404');
    const wrongType = await svc.call(ATTACH, { payload: { ...attachment('create'), type: 'Issue' } });
    expect(wrongType.statusCode).toBe(422);
    expect(svc.read('SELECT id FROM tracker_attachments')).toEqual([]);
  });
});
