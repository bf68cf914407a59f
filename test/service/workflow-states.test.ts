import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { startTestService, type TestService } from '../support/service.ts';

const UPSERT = 'svc/tracker/private/workflow_state_cache_upsert';
const GET = 'svc/tracker/private/workflow_state_cache_get_by_team';

let svc: TestService;
beforeEach(async () => {
  svc = await startTestService();
});
afterEach(async () => {
  await svc.close();
});

const todo = { id: 's-1', name: 'Todo', normalized_name: 'todo' };
const doing = { id: 's-2', name: 'In Progress', normalized_name: 'in_progress' };
const done = { id: 's-3', name: 'Done', normalized_name: 'done' };

describe('workflow state cache', () => {
  it('reads an uncached team as an empty list with updated_at null', async () => {
    const reply = await svc.call(GET, { team_id: 'team-eng' });
    expect(reply.body).toEqual({
      status: 'success',
      value: { team_id: 'team-eng', states: [], updated_at: null },
    });
  });

  it('stores the states in the given order; an upsert replaces the whole list; teams are separate', async () => {
    const first = await svc.call(UPSERT, { team_id: 'team-eng', states: [done, todo, doing] });
    expect(first.body.value).toMatchObject({ team_id: 'team-eng', states: [done, todo, doing] });
    await svc.call(UPSERT, { team_id: 'team-ops', states: [todo] });
    expect((await svc.call(GET, { team_id: 'team-eng' })).body.value).toMatchObject({
      states: [done, todo, doing],
    });

    await svc.call(UPSERT, { team_id: 'team-eng', states: [todo, done] });
    const replaced = await svc.call(GET, { team_id: 'team-eng' });
    expect(replaced.body.value).toMatchObject({ states: [todo, done] });
    expect((replaced.body.value as { updated_at: string }).updated_at).toMatch(/^\d{4}-\d\d-\d\dT/);
    expect((await svc.call(GET, { team_id: 'team-ops' })).body.value).toMatchObject({ states: [todo] });
  });

  it('refuses duplicate state ids (400) and keeps the previous list', async () => {
    await svc.call(UPSERT, { team_id: 'team-eng', states: [todo] });
    const reply = await svc.call(UPSERT, { team_id: 'team-eng', states: [todo, todo] });
    expect(reply.statusCode).toBe(400);
    expect((await svc.call(GET, { team_id: 'team-eng' })).body.value).toMatchObject({ states: [todo] });
  });

  it('is for the operator: a user token gets 403', async () => {
    expect((await svc.call(GET, { team_id: 'team-eng' }, 'user')).statusCode).toBe(403);
    expect((await svc.call(UPSERT, { team_id: 'team-eng', states: [] }, 'user')).statusCode).toBe(403);
  });

  it('keeps the cache across a restart', async () => {
    await svc.call(UPSERT, { team_id: 'team-eng', states: [todo, doing] });
    await svc.restart();
    expect((await svc.call(GET, { team_id: 'team-eng' })).body.value).toMatchObject({
      states: [todo, doing],
    });
  });
});
