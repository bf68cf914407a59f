import { DEFAULT_PAGE_SIZE, USERS_LIST_MAX } from '../../protocol/index.ts';
import { CallRefused } from '../errors.ts';
import { TrackerIssues } from '../store/tracker-issues.ts';
import { TrackerProjects } from '../store/tracker-projects.ts';
import { TrackerUsers } from '../store/tracker-users.ts';
import { WorkflowStates } from '../store/workflow-states.ts';
import type { ServiceStores } from './stores.ts';
import type { CallContext, Implementations } from './types.ts';

type TrackerPath =
  | 'svc/tracker/action/issues/search/run'
  | 'svc/tracker/action/issues/batch/run'
  | 'svc/tracker/action/projects/list/run'
  | 'svc/tracker/action/projects/get/run'
  | 'svc/tracker/action/users/viewer/run'
  | 'svc/tracker/private/users_list'
  | 'svc/tracker/private/workflow_state_cache_upsert'
  | 'svc/tracker/private/workflow_state_cache_get_by_team'
  | 'svc/tracker/private/key_cache_get_by_uuid';

export function trackerFunctions({ db }: ServiceStores): Implementations<TrackerPath> {
  return {
    'svc/tracker/action/issues/search/run': ({ query, pagination }) =>
      db.read((sql) =>
        new TrackerIssues(sql).search({
          query,
          first: pagination?.first ?? DEFAULT_PAGE_SIZE,
          after: pagination?.after,
          includeArchived: pagination?.includeArchived ?? false,
        }),
      ),

    'svc/tracker/action/issues/batch/run': ({ identifiers }) =>
      db.read(async (sql) => {
        const issues = new TrackerIssues(sql);
        const nodes = [];
        const missing = [];
        for (const identifier of new Set(identifiers)) {
          const issue = await issues.findByIdentifier(identifier);
          if (issue) nodes.push(issue);
          else missing.push(identifier);
        }
        return { nodes, missing };
      }),

    'svc/tracker/action/projects/list/run': ({ pagination }) =>
      db.read((sql) =>
        new TrackerProjects(sql).list(pagination?.first ?? DEFAULT_PAGE_SIZE, pagination?.after),
      ),

    'svc/tracker/action/projects/get/run': ({ id }) =>
      db.read(async (sql) => {
        const project = await new TrackerProjects(sql).findById(id);
        if (!project) throw new CallRefused(`No tracker project with id ${id}.`, { path: ['id'] });
        return project;
      }),

    'svc/tracker/action/users/viewer/run': (_args, ctx) =>
      db.read((sql) => viewer(ctx, new TrackerUsers(sql))),

    'svc/tracker/private/users_list': ({ email }) =>
      db.read(async (sql) => ({ users: await new TrackerUsers(sql).list(USERS_LIST_MAX, email) })),

    'svc/tracker/private/workflow_state_cache_upsert': ({ team_id, states }) =>
      db.transaction((sql) => new WorkflowStates(sql).replace(team_id, states)),

    'svc/tracker/private/workflow_state_cache_get_by_team': ({ team_id }) =>
      db.read((sql) => new WorkflowStates(sql).get(team_id)),

    'svc/tracker/private/key_cache_get_by_uuid': ({ tracker_task_uuid, tracker_team_uuid }) =>
      db.read(async (sql) => {
        const issue = await new TrackerIssues(sql).findById(tracker_task_uuid);
        if (!issue || issue.team_id !== tracker_team_uuid) return null;
        return { task_key: issue.identifier, tracker_task_uuid, tracker_team_uuid };
      }),
  };
}

/** The user the presented API key belongs to; a user the webhooks have not delivered yet has no name or email. */
async function viewer(ctx: CallContext, users: TrackerUsers) {
  // The dispatcher only calls a tracker action with a registered key, so apiKey is set here.
  const userId = ctx.apiKey?.user_id;
  if (userId === undefined) throw new Error('tracker action called without a registered API key');
  return (await users.findById(userId)) ?? { id: userId, name: null, email: null };
}
