import { expect } from 'vitest';
import { sha256 } from './flows.ts';
import type { TestService } from './service.ts';

export const API_SECRET = 'lin_api_test0123456789abcdefSECRET';

/** Registers a personal API key the way the service learns of one: an add_activity key-created record. */
export async function registerApiKey(
  svc: TestService,
  secret = API_SECRET,
  userId = 'user-1',
): Promise<void> {
  const reply = await svc.call('svc/swarm_api_key/private/add_activity', {
    api_key_tid: `tid-${userId}`,
    ts: Date.now(),
    payload: {
      type: 'key-created',
      hash: sha256(secret),
      name: 'test key',
      prefix_4: secret.slice(0, 4),
      suffix_4: secret.slice(-4),
      user_id: userId,
    },
  });
  expect(reply.statusCode).toBe(200);
}

export function apiKey(secret = API_SECRET) {
  return { secret, type: 'personal-api-key' };
}

export interface IssueFields {
  id: string;
  identifier: string;
  title: string;
  description?: string | null;
  priority?: number;
  state?: { name: string };
  teamId?: string;
  parentId?: string | null;
  assigneeId?: string | null;
  archivedAt?: string | null;
}

/** Delivers one webhook body through store_webhook and expects it to be stored. */
export async function deliver(
  svc: TestService,
  body: { action: string; type: string; data: Record<string, unknown> },
  team = 'team-eng',
) {
  const reply = await svc.call('wh/tracker/private/store_webhook', {
    payload: body,
    team,
    status: 'received',
  });
  expect(reply.statusCode, JSON.stringify(reply.body)).toBe(200);
  return reply;
}

export function issueCreated(fields: IssueFields) {
  return { action: 'create', type: 'Issue', data: { teamId: 'team-eng', ...fields } };
}

/**
 * A small tracker through the webhooks, as the tests of the window and its API use it: ENG-1 "Fix login" (Todo)
 * with a sub-task ENG-2 "Login form", team-eng's workflow states Todo and Done, and the user Ada (ada@example.com).
 */
export async function seedLoginTasks(svc: TestService): Promise<void> {
  // The user of the repositories' git email (initGit): a key is registered only to a user the tracker knows.
  await deliver(svc, { action: 'create', type: 'User', data: VIEWER });
  await deliver(
    svc,
    issueCreated({ id: 'i-1', identifier: 'ENG-1', title: 'Fix login', state: { name: 'Todo' } }),
  );
  await deliver(svc, issueCreated({ id: 'i-2', identifier: 'ENG-2', title: 'Login form', parentId: 'i-1' }));
  const states = await svc.call('svc/tracker/private/workflow_state_cache_upsert', {
    team_id: 'team-eng',
    states: [
      { id: 's1', name: 'Todo', normalized_name: 'todo' },
      { id: 's2', name: 'Done', normalized_name: 'done' },
    ],
  });
  expect(states.statusCode).toBe(200);
}

export const VIEWER = { id: 'u-ada', name: 'Ada Lovelace', email: 'ada@example.com' };

const TITLES = [
  'Retry webhook deliveries that time out',
  'Show the flow graph in the editor',
  'Export a flow as YAML',
  'Rate-limit the public search endpoint',
  'Keep the last 50 runs of each flow',
  'Explain refused uploads in the CLI',
];

/**
 * A tracker with a viewer: Ada's personal API key (`secret`) is registered as hers, the tracker knows her, and
 * `count` open tasks are assigned to her (ENG-101…, with descriptions), next to a task of someone else and one of
 * hers that is done. team-eng's workflow states are Todo, In Progress and Done.
 */
export async function seedViewerTasks(svc: TestService, secret: string, count: number): Promise<void> {
  await registerApiKey(svc, secret, VIEWER.id);
  await deliver(svc, { action: 'create', type: 'User', data: VIEWER });
  await deliver(
    svc,
    issueCreated({ id: 'i-other', identifier: 'ENG-90', title: 'Not Ada’s', assigneeId: 'u-bob' }),
  );
  await deliver(
    svc,
    issueCreated({
      id: 'i-done',
      identifier: 'ENG-91',
      title: 'Already done',
      assigneeId: VIEWER.id,
      state: { name: 'Done' },
    }),
  );
  for (let n = 0; n < count; n++) {
    const title = TITLES[n % TITLES.length]!;
    await deliver(
      svc,
      issueCreated({
        id: `i-${101 + n}`,
        identifier: `ENG-${101 + n}`,
        title: n < TITLES.length ? title : `${title} (part ${Math.floor(n / TITLES.length) + 1})`,
        description: `${title}.\n\nSteps: open the flow, run it twice, compare the logs. Task ${101 + n}.`,
        priority: (n % 4) + 1,
        state: { name: n % 3 === 0 ? 'In Progress' : 'Todo' },
        assigneeId: VIEWER.id,
      }),
    );
  }
  const states = await svc.call('svc/tracker/private/workflow_state_cache_upsert', {
    team_id: 'team-eng',
    states: [
      { id: 's1', name: 'Todo', normalized_name: 'todo' },
      { id: 's2', name: 'In Progress', normalized_name: 'in progress' },
      { id: 's3', name: 'Done', normalized_name: 'done' },
    ],
  });
  expect(states.statusCode).toBe(200);
}
