import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { startTestService, type TestService } from '../support/service.ts';
import { apiKey, deliver, issueCreated, registerApiKey } from '../support/tracker.ts';

const SYNC_TASK = 'svc/task/action/sync_task/run';
const UPDATE = 'svc/task/action/update/run';
const GET = 'svc/task/private/get_by_task_key';
const UPSERT_STATES = 'svc/tracker/private/workflow_state_cache_upsert';
const SEARCH = 'svc/tracker/action/issues/search/run';

const OWNER = { repo_remote_url: 'git@example.com:acme/app.git', user_email: 'ada@example.com' };

let svc: TestService;
beforeEach(async () => {
  svc = await startTestService();
  // ENG-1 ← ENG-2 ← ENG-3 (a chain), and ENG-4 unrelated.
  await deliver(
    svc,
    issueCreated({ id: 'i-1', identifier: 'ENG-1', title: 'Epic', state: { name: 'Todo' }, priority: 3 }),
  );
  await deliver(
    svc,
    issueCreated({
      id: 'i-2',
      identifier: 'ENG-2',
      title: 'Child',
      parentId: 'i-1',
      state: { name: 'Todo' },
    }),
  );
  await deliver(svc, issueCreated({ id: 'i-3', identifier: 'ENG-3', title: 'Grandchild', parentId: 'i-2' }));
  await deliver(
    svc,
    issueCreated({ id: 'i-4', identifier: 'ENG-4', title: 'Other', state: { name: 'Todo' } }),
  );
});
afterEach(async () => {
  await svc.close();
});

function tasks() {
  return svc.read<{
    task_key: string;
    status: string | null;
    priority: string | null;
    parent_key: string | null;
  }>('SELECT task_key, status, priority, parent_key FROM tasks ORDER BY task_key');
}

describe('sync_task', () => {
  it('brings a tracker issue and its sub-issues in as tasks, with the parent chain', async () => {
    const reply = await svc.call(SYNC_TASK, { task_key: 'ENG-1', ...OWNER }, 'user');
    expect(reply.statusCode, JSON.stringify(reply.body)).toBe(200);
    expect(reply.body.value).toMatchObject({
      task: {
        task_key: 'ENG-1',
        title: 'Epic',
        status: 'Todo',
        priority: 'Medium',
        team_id: 'team-eng',
        ...OWNER,
      },
      synced: ['ENG-2', 'ENG-3'],
    });
    expect(tasks()).toEqual([
      { task_key: 'ENG-1', status: 'Todo', priority: 'Medium', parent_key: null },
      { task_key: 'ENG-2', status: 'Todo', priority: null, parent_key: 'ENG-1' },
      { task_key: 'ENG-3', status: null, priority: null, parent_key: 'ENG-2' },
    ]);
  });

  it('refreshes a task from the tracker on a second call, keeping its creation time', async () => {
    await svc.call(SYNC_TASK, { task_key: 'ENG-4', ...OWNER }, 'user');
    const [before] = svc.read<{ created_at: string }>('SELECT created_at FROM tasks');
    await deliver(svc, {
      action: 'update',
      type: 'Issue',
      data: { id: 'i-4', identifier: 'ENG-4', title: 'Renamed' },
    });
    const again = await svc.call(SYNC_TASK, { task_key: 'ENG-4', ...OWNER }, 'user');
    expect(again.body.value).toMatchObject({ task: { title: 'Renamed', created_at: before!.created_at } });
  });

  it('refuses an identifier the tracker store does not know (422) and stores nothing', async () => {
    const reply = await svc.call(SYNC_TASK, { task_key: 'ENG-404', ...OWNER }, 'user');
    expect(reply.statusCode).toBe(422);
    expect(reply.body.errorMessage).toContain('ENG-404');
    expect(tasks()).toEqual([]);
  });
});

describe('task update', () => {
  beforeEach(async () => {
    await svc.call(SYNC_TASK, { task_key: 'ENG-1', ...OWNER }, 'user');
    await svc.call(SYNC_TASK, { task_key: 'ENG-4', ...OWNER }, 'user');
  });

  it('sets status and priority on one task only without recursive', async () => {
    const reply = await svc.call(
      UPDATE,
      { task_key: 'ENG-1', status: 'In Progress', priority: 'urgent' },
      'user',
    );
    expect(reply.body.value).toMatchObject({
      task: { task_key: 'ENG-1', status: 'In Progress', priority: 'Urgent' },
      updated: ['ENG-1'],
    });
    expect(tasks().map((t) => [t.task_key, t.status])).toEqual([
      ['ENG-1', 'In Progress'],
      ['ENG-2', 'Todo'],
      ['ENG-3', null],
      ['ENG-4', 'Todo'],
    ]);
  });

  it('with recursive sets every descendant at any depth, and nothing outside the tree', async () => {
    const reply = await svc.call(UPDATE, { task_key: 'ENG-1', status: 'Done', recursive: true }, 'user');
    expect((reply.body.value as { updated: string[] }).updated.sort()).toEqual(['ENG-1', 'ENG-2', 'ENG-3']);
    expect(tasks().map((t) => [t.task_key, t.status])).toEqual([
      ['ENG-1', 'Done'],
      ['ENG-2', 'Done'],
      ['ENG-3', 'Done'],
      ['ENG-4', 'Todo'],
    ]);
  });

  it('mirrors the new status onto the tracker issue, so search shows it', async () => {
    await registerApiKey(svc);
    await svc.call(UPDATE, { task_key: 'ENG-4', status: 'Done', priority: 'Low' }, 'user');
    const reply = await svc.call(SEARCH, { api_key: apiKey(), query: 'ENG-4' }, 'user');
    expect((reply.body.value as { nodes: unknown[] }).nodes[0]).toMatchObject({
      state_name: 'Done',
      priority_label: 'Low',
      priority: 4,
    });
  });

  it("accepts only the team's workflow states once they are cached, in the team's spelling", async () => {
    await svc.call(UPSERT_STATES, {
      team_id: 'team-eng',
      states: [
        { id: 's-1', name: 'Todo', normalized_name: 'todo' },
        { id: 's-2', name: 'In Review', normalized_name: 'in_review' },
      ],
    });
    const ok = await svc.call(UPDATE, { task_key: 'ENG-1', status: 'IN_REVIEW', recursive: true }, 'user');
    expect(ok.body.value).toMatchObject({ task: { status: 'In Review' } });

    const refused = await svc.call(UPDATE, { task_key: 'ENG-1', status: 'Shipped', recursive: true }, 'user');
    expect(refused.statusCode).toBe(422);
    expect(refused.body.errorMessage).toContain('Todo, In Review');
    expect(
      tasks()
        .filter((t) => t.task_key !== 'ENG-4')
        .every((t) => t.status === 'In Review'),
    ).toBe(true);
  });

  it('reads the states cached under the team key (ENG, as the README caches them) when the team id has none', async () => {
    await svc.call(UPSERT_STATES, {
      team_id: 'ENG',
      states: [
        { id: 's-1', name: 'Todo', normalized_name: 'todo' },
        { id: 's-2', name: 'In Review', normalized_name: 'in_review' },
      ],
    });
    const ok = await svc.call(UPDATE, { task_key: 'ENG-1', status: 'in_review' }, 'user');
    expect(ok.body.value).toMatchObject({ task: { status: 'In Review' } });
    const refused = await svc.call(UPDATE, { task_key: 'ENG-1', status: 'Shipped' }, 'user');
    expect(refused.statusCode).toBe(422);
    expect(refused.body.errorMessage).toContain('not a workflow state of team ENG');
  });

  it('refuses an unknown task (422), and args with neither status nor priority (400)', async () => {
    const unknown = await svc.call(UPDATE, { task_key: 'ENG-404', status: 'Done' }, 'user');
    expect(unknown.statusCode).toBe(422);
    const empty = await svc.call(UPDATE, { task_key: 'ENG-1' }, 'user');
    expect(empty.statusCode).toBe(400);
    expect(JSON.stringify(empty.body.errorData)).toContain('status');
  });

  it('keeps tasks across a restart', async () => {
    await svc.call(UPDATE, { task_key: 'ENG-1', status: 'Done', recursive: true }, 'user');
    await svc.restart();
    const reply = await svc.call(GET, { task_key: 'ENG-3', team_external_id: 'team-eng' });
    expect(reply.body.value).toMatchObject({ task_key: 'ENG-3', status: 'Done', parent_key: 'ENG-2' });
  });
});

describe('get_by_task_key', () => {
  it('reads a task by key within its team; another team or an unknown key is 422; users are refused', async () => {
    await svc.call(SYNC_TASK, { task_key: 'ENG-4', ...OWNER }, 'user');
    const reply = await svc.call(GET, { task_key: 'ENG-4', team_external_id: 'team-eng' });
    expect(reply.body.value).toMatchObject({ task_key: 'ENG-4', title: 'Other', ...OWNER });
    expect((await svc.call(GET, { task_key: 'ENG-4', team_external_id: 'team-ops' })).statusCode).toBe(422);
    expect((await svc.call(GET, { task_key: 'ENG-9', team_external_id: 'team-eng' })).statusCode).toBe(422);
    expect(
      (await svc.call(GET, { task_key: 'ENG-4', team_external_id: 'team-eng' }, 'user')).statusCode,
    ).toBe(403);
  });
});
