import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { startTestService, type TestService } from '../support/service.ts';
import { API_SECRET, apiKey, deliver, issueCreated, registerApiKey } from '../support/tracker.ts';

const SEARCH = 'svc/tracker/action/issues/search/run';
const BATCH = 'svc/tracker/action/issues/batch/run';
const PROJECTS = 'svc/tracker/action/projects/list/run';
const PROJECT = 'svc/tracker/action/projects/get/run';
const VIEWER = 'svc/tracker/action/users/viewer/run';
const KEY_CACHE = 'svc/tracker/private/key_cache_get_by_uuid';
const USERS = 'svc/tracker/private/users_list';

interface Page {
  nodes: { identifier: string; title: string }[];
  pageInfo: { hasNextPage: boolean; endCursor: string | null };
}

interface ProjectPage {
  nodes: { id: string }[];
  pageInfo: Page['pageInfo'];
}

let svc: TestService;
beforeEach(async () => {
  svc = await startTestService();
  await registerApiKey(svc);
});
afterEach(async () => {
  await svc.close();
});

async function search(query: string, pagination?: Record<string, unknown>): Promise<Page> {
  const reply = await svc.call(
    SEARCH,
    { api_key: apiKey(), query, ...(pagination && { pagination }) },
    'user',
  );
  expect(reply.statusCode, JSON.stringify(reply.body)).toBe(200);
  return reply.body.value as Page;
}

async function seedIssues(count: number, title: (n: number) => string) {
  for (let n = 1; n <= count; n++) {
    await deliver(svc, issueCreated({ id: `i-${n}`, identifier: `ENG-${n}`, title: title(n) }));
  }
}

describe('tracker actions and the personal API key', () => {
  const unregistered = apiKey('lin_api_never_registered_key');
  it.each([
    [SEARCH, { query: '' }],
    [BATCH, { identifiers: ['ENG-1'] }],
    [PROJECTS, {}],
    [PROJECT, { id: 'p-1' }],
    [VIEWER, {}],
  ])('%s refuses an unregistered key with 401, without echoing it', async (path, args) => {
    const reply = await svc.call(path, { api_key: unregistered, ...args }, 'user');
    expect(reply.statusCode).toBe(401);
    expect(reply.body.errorData).toMatchObject({ reason: 'unknown_api_key' });
    expect(JSON.stringify(reply.body)).not.toContain('never_registered');
  });

  it('serves the same call once the key is registered', async () => {
    const secret = 'lin_api_registered_later_0001';
    const before = await svc.call(VIEWER, { api_key: apiKey(secret) }, 'user');
    expect(before.statusCode).toBe(401);
    await registerApiKey(svc, secret, 'user-2');
    const after = await svc.call(VIEWER, { api_key: apiKey(secret) }, 'user');
    expect(after.statusCode).toBe(200);
    expect(after.body.value).toEqual({ id: 'user-2', name: null, email: null });
  });

  it('viewer names the user the webhooks delivered for the key', async () => {
    await deliver(svc, {
      action: 'create',
      type: 'User',
      data: { id: 'user-1', name: 'Ada', email: 'ada@example.com' },
    });
    const reply = await svc.call(VIEWER, { api_key: apiKey(API_SECRET) }, 'user');
    expect(reply.body.value).toEqual({ id: 'user-1', name: 'Ada', email: 'ada@example.com' });
  });
});

describe('users_list: the tracker users a key can be registered to', () => {
  beforeEach(async () => {
    for (const user of [
      { id: 'u-bob', name: 'Bob', email: 'bob@example.com' },
      { id: 'u-ada', name: 'Ada Lovelace', email: 'Ada@Example.com' },
      { id: 'u-bot', name: 'CI bot', email: null },
    ])
      await deliver(svc, { action: 'create', type: 'User', data: user });
  });

  it('lists every user by name, or those of one email (as git writes it, in any case)', async () => {
    const all = await svc.call(USERS, {});
    expect(all.statusCode, JSON.stringify(all.body)).toBe(200);
    expect((all.body.value as { users: { id: string }[] }).users.map((user) => user.id)).toEqual([
      'u-ada',
      'u-bob',
      'u-bot',
    ]);
    const ada = await svc.call(USERS, { email: ' ada@example.com ' });
    expect(ada.body.value).toEqual({
      users: [{ id: 'u-ada', name: 'Ada Lovelace', email: 'Ada@Example.com' }],
    });
    expect((await svc.call(USERS, { email: 'nobody@example.com' })).body.value).toEqual({ users: [] });
  });

  it('is for an operator (the admin token) only', async () => {
    expect((await svc.call(USERS, {}, 'user')).statusCode).toBe(403);
  });
});

describe('issues search', () => {
  it('pages through every match to the end with opaque cursors, newest first, no row twice', async () => {
    await seedIssues(23, (n) => (n % 2 === 0 ? `Login bug number ${n}` : `Billing page ${n}`));
    const seen: string[] = [];
    let after: string | undefined;
    let pages = 0;
    for (;;) {
      const page = await search('login', { first: 5, ...(after && { after }) });
      pages++;
      seen.push(...page.nodes.map((node) => node.identifier));
      if (!page.pageInfo.hasNextPage) {
        expect(page.pageInfo.endCursor === null || page.nodes.length > 0).toBe(true);
        break;
      }
      expect(page.nodes).toHaveLength(5);
      after = page.pageInfo.endCursor ?? undefined;
      expect(after).toBeTruthy();
      expect(after).not.toMatch(/^\d+$/);
    }
    const expected = Array.from({ length: 11 }, (_, i) => `ENG-${22 - 2 * i}`);
    expect(seen).toEqual(expected);
    expect(pages).toBe(3);
  });

  it('lists the issue whose identifier is the query first, then the rest newest first, each once', async () => {
    // Searching "ENG-1" among ENG-1…ENG-11 listed ENG-1 last of 11 (every ENG-1x matches the prefix).
    await seedIssues(11, (n) => `Task ${n}`);
    expect((await search('ENG-1')).nodes.map((n) => n.identifier)).toEqual(['ENG-1', 'ENG-11', 'ENG-10']);
    expect((await search('eng-1')).nodes[0]!.identifier).toBe('ENG-1');
    const seen: string[] = [];
    let after: string | undefined;
    for (;;) {
      const page = await search('ENG-1', { first: 2, ...(after && { after }) });
      seen.push(...page.nodes.map((node) => node.identifier));
      if (!page.pageInfo.hasNextPage) break;
      after = page.pageInfo.endCursor ?? undefined;
    }
    expect(seen).toEqual(['ENG-1', 'ENG-11', 'ENG-10']);
  });

  it('matches identifier, title and description by word prefix, every word required', async () => {
    await deliver(
      svc,
      issueCreated({ id: 'a', identifier: 'ENG-7', title: 'Sync stalls', description: 'after sleep' }),
    );
    await deliver(
      svc,
      issueCreated({ id: 'b', identifier: 'OPS-8', title: 'Disk full', description: 'sync logs grow' }),
    );
    expect((await search('sync')).nodes.map((n) => n.identifier)).toEqual(['OPS-8', 'ENG-7']);
    expect((await search('sync slee')).nodes.map((n) => n.identifier)).toEqual(['ENG-7']);
    expect((await search('ENG-7')).nodes.map((n) => n.identifier)).toEqual(['ENG-7']);
    expect((await search('nothing-like-this')).nodes).toEqual([]);
  });

  it('treats FTS syntax in the query as text, and a query of punctuation as matching nothing', async () => {
    await seedIssues(2, (n) => `Issue ${n}`);
    for (const query of ['"', 'AND OR NOT', '*', 'title:x', '(((', 'NEAR(a b)']) {
      const page = await search(query);
      expect(Array.isArray(page.nodes)).toBe(true);
    }
    expect((await search('---')).nodes).toEqual([]);
  });

  it('lists everything for an empty query, and archived issues only with includeArchived', async () => {
    await seedIssues(3, (n) => `Task ${n}`);
    await deliver(
      svc,
      issueCreated({
        id: 'old',
        identifier: 'ENG-99',
        title: 'Old task',
        archivedAt: '2026-01-01T00:00:00Z',
      }),
    );
    expect((await search('')).nodes.map((n) => n.identifier)).toEqual(['ENG-3', 'ENG-2', 'ENG-1']);
    const withArchived = await search('task', { includeArchived: true });
    expect(withArchived.nodes.map((n) => n.identifier)).toContain('ENG-99');
  });

  it('refuses a cursor it did not give out with 422, and a page size over 250 with 400', async () => {
    await seedIssues(3, (n) => `Task ${n}`);
    const forged = await svc.call(
      SEARCH,
      { api_key: apiKey(), query: '', pagination: { after: 'bm9wZQ' } },
      'user',
    );
    expect(forged.statusCode).toBe(422);
    expect(forged.body.errorMessage).toContain('pagination.after');

    await deliver(svc, { action: 'create', type: 'Project', data: { id: 'p-1', name: 'P' } });
    await deliver(svc, { action: 'create', type: 'Project', data: { id: 'p-2', name: 'Q' } });
    const projects = await svc.call(PROJECTS, { api_key: apiKey(), pagination: { first: 1 } }, 'user');
    const projectCursor = (projects.body.value as Page).pageInfo.endCursor;
    const crossed = await svc.call(
      SEARCH,
      { api_key: apiKey(), query: '', pagination: { after: projectCursor } },
      'user',
    );
    expect(crossed.statusCode).toBe(422);

    const tooMany = await svc.call(
      SEARCH,
      { api_key: apiKey(), query: '', pagination: { first: 251 } },
      'user',
    );
    expect(tooMany.statusCode).toBe(400);
  });

  it('keeps webhooks-fed issues across a restart on the same database', async () => {
    await seedIssues(3, (n) => `Persistent ${n}`);
    await svc.restart();
    expect((await search('persistent')).nodes).toHaveLength(3);
  });
});

describe('issues batch, projects, key cache', () => {
  it('batch returns the known issues and names the missing ones', async () => {
    await seedIssues(2, (n) => `Task ${n}`);
    const reply = await svc.call(
      BATCH,
      { api_key: apiKey(), identifiers: ['ENG-2', 'ENG-404', 'eng-1'] },
      'user',
    );
    const value = reply.body.value as { nodes: { identifier: string }[]; missing: string[] };
    expect(value.nodes.map((n) => n.identifier)).toEqual(['ENG-2', 'ENG-1']);
    expect(value.missing).toEqual(['ENG-404']);
  });

  it('lists projects in pages in arrival order and gets one by id; an unknown id is 422', async () => {
    for (const n of [1, 2, 3]) {
      await deliver(svc, { action: 'create', type: 'Project', data: { id: `p-${n}`, name: `Project ${n}` } });
    }
    const first = await svc.call(PROJECTS, { api_key: apiKey(), pagination: { first: 2 } }, 'user');
    const page1 = first.body.value as ProjectPage;
    expect(page1.nodes.map((p) => p.id)).toEqual(['p-1', 'p-2']);
    expect(page1.pageInfo.hasNextPage).toBe(true);
    const second = await svc.call(
      PROJECTS,
      { api_key: apiKey(), pagination: { first: 2, after: page1.pageInfo.endCursor } },
      'user',
    );
    const page2 = second.body.value as ProjectPage;
    expect(page2.nodes.map((p) => p.id)).toEqual(['p-3']);
    expect(page2.pageInfo.hasNextPage).toBe(false);

    const one = await svc.call(PROJECT, { api_key: apiKey(), id: 'p-2' }, 'user');
    expect(one.body.value).toMatchObject({ id: 'p-2', name: 'Project 2', team_ids: [] });
    const missing = await svc.call(PROJECT, { api_key: apiKey(), id: 'p-404' }, 'user');
    expect(missing.statusCode).toBe(422);
  });

  it('key cache maps an issue uuid and team uuid to its key, and a miss to null', async () => {
    await deliver(svc, issueCreated({ id: 'uuid-1', identifier: 'ENG-5', title: 'Keyed' }));
    const hit = await svc.call(KEY_CACHE, { tracker_task_uuid: 'uuid-1', tracker_team_uuid: 'team-eng' });
    expect(hit.body.value).toEqual({
      task_key: 'ENG-5',
      tracker_task_uuid: 'uuid-1',
      tracker_team_uuid: 'team-eng',
    });
    const otherTeam = await svc.call(KEY_CACHE, {
      tracker_task_uuid: 'uuid-1',
      tracker_team_uuid: 'team-ops',
    });
    expect(otherTeam.statusCode).toBe(200);
    expect(otherTeam.body.value).toBeNull();
    const asUser = await svc.call(
      KEY_CACHE,
      { tracker_task_uuid: 'uuid-1', tracker_team_uuid: 'team-eng' },
      'user',
    );
    expect(asUser.statusCode).toBe(403);
  });
});
