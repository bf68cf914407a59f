import {
  PRIORITY_LABELS,
  workflowStateTeams,
  type TaskRecord,
  type TrackerIssue,
  type WorkflowState,
} from '../../protocol/index.ts';
import { CallRefused } from '../errors.ts';
import { Tasks, type TaskImport } from '../store/tasks.ts';
import { TrackerIssues } from '../store/tracker-issues.ts';
import { WorkflowStates } from '../store/workflow-states.ts';
import type { Sql } from '../db/open.ts';
import type { ServiceStores } from './stores.ts';
import type { Implementations } from './types.ts';

type TaskPath =
  'svc/task/action/update/run' | 'svc/task/action/sync_task/run' | 'svc/task/private/get_by_task_key';

export function taskFunctions({ db }: ServiceStores): Implementations<TaskPath> {
  /** The stores of one call, on its transaction. */
  const storesOn = (sql: Sql) => ({
    tasks: new Tasks(sql),
    issues: new TrackerIssues(sql),
    workflowStates: new WorkflowStates(sql),
  });
  type Stores = ReturnType<typeof storesOn>;
  const writing = <T>(work: (stores: Stores) => Promise<T>) => db.transaction((sql) => work(storesOn(sql)));

  async function mustFind(tasks: Tasks, taskKey: string): Promise<TaskRecord> {
    const task = await tasks.find(taskKey);
    if (!task) {
      throw new CallRefused(`No task ${taskKey}: open it with sync_task first.`, { path: ['task_key'] });
    }
    return task;
  }

  /**
   * The team's own spelling of a status when its workflow states are cached (matched by name or normalized
   * name, ignoring case); any status when the team has no cached states.
   */
  async function canonicalStatus(
    workflowStates: WorkflowStates,
    status: string,
    task: TaskRecord,
  ): Promise<string> {
    // Under the tracker team's id, else under its key (ENG of ENG-1): operators cache them under either.
    let states: WorkflowState[] = [];
    let team = task.team_id ?? task.task_key;
    for (const name of workflowStateTeams(task)) {
      states = (await workflowStates.get(name)).states;
      team = name;
      if (states.length > 0) break;
    }
    if (states.length === 0) return status;
    const wanted = status.toLowerCase();
    const state = states.find(
      (s) => s.name.toLowerCase() === wanted || s.normalized_name.toLowerCase() === wanted,
    );
    if (!state) {
      throw new CallRefused(
        `"${status}" is not a workflow state of team ${team} (task ${task.task_key}); ` +
          `use one of: ${states.map((s) => s.name).join(', ')}.`,
        { path: ['status'] },
      );
    }
    return state.name;
  }

  return {
    'svc/task/action/sync_task/run': ({ task_key, repo_remote_url, user_email }) =>
      writing(async ({ tasks, issues }) => {
        const root = await issues.findByIdentifier(task_key);
        if (!root) {
          throw new CallRefused(
            `No tracker issue ${task_key} is known to the service; it arrives through the tracker's webhook.`,
            { path: ['task_key'] },
          );
        }
        const descendants = await issues.descendantsOf(root.id);
        const identifiers = new Map([root, ...descendants].map((issue) => [issue.id, issue.identifier]));
        if (root.parent_id !== null) {
          const parent = await issues.findById(root.parent_id);
          if (parent) identifiers.set(parent.id, parent.identifier);
        }
        for (const issue of [root, ...descendants]) {
          await tasks.save(toTaskImport(issue, identifiers, { repo_remote_url, user_email }));
        }
        return {
          task: await mustFind(tasks, root.identifier),
          synced: descendants.map((issue) => issue.identifier),
        };
      }),

    'svc/task/action/update/run': (args) =>
      writing(async ({ tasks, issues, workflowStates }) => {
        const task = await mustFind(tasks, args.task_key);
        const targets = args.recursive ? await tasks.subtree(task.task_key) : [task];
        const priority = args.priority === undefined ? undefined : canonicalPriority(args.priority);
        for (const target of targets) {
          const status =
            args.status === undefined
              ? undefined
              : await canonicalStatus(workflowStates, args.status, target);
          await tasks.change(target.task_key, {
            status,
            priority,
            repo_remote_url: args.repo_remote_url,
            user_email: args.user_email,
          });
          await issues.setStateAndPriority(target.tracker_issue_id, status ?? null, priority ?? null);
        }
        return {
          task: await mustFind(tasks, task.task_key),
          updated: targets.map((target) => target.task_key),
        };
      }),

    'svc/task/private/get_by_task_key': ({ task_key, team_external_id }) =>
      db.read(async (sql) => {
        const task = await new Tasks(sql).find(task_key);
        if (!task || task.team_id !== team_external_id) {
          throw new CallRefused(`No task ${task_key} in team ${team_external_id}.`, { path: ['task_key'] });
        }
        return task;
      }),
  };
}

/** The tracker's own label when the priority names one (ignoring case), else the string as given. */
function canonicalPriority(priority: string): string {
  return PRIORITY_LABELS.find((label) => label.toLowerCase() === priority.toLowerCase()) ?? priority;
}

function toTaskImport(
  issue: TrackerIssue,
  identifiers: Map<string, string>,
  owner: { repo_remote_url: string; user_email: string },
): TaskImport {
  return {
    task_key: issue.identifier,
    title: issue.title,
    status: issue.state_name,
    priority: issue.priority_label,
    parent_key: issue.parent_id === null ? null : (identifiers.get(issue.parent_id) ?? null),
    team_id: issue.team_id,
    tracker_issue_id: issue.id,
    ...owner,
  };
}
