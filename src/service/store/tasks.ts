import type { TaskRecord } from '../../protocol/index.ts';
import type { ServiceDatabase } from '../db/open.ts';
import { nowIso } from '../clock.ts';

export type TaskImport = Omit<TaskRecord, 'created_at' | 'updated_at'>;

export interface TaskChange {
  status?: string;
  priority?: string;
  repo_remote_url?: string;
  user_email?: string;
}

const TASK_COLUMNS = `task_key, title, status, priority, repo_remote_url, user_email, parent_key, team_id,
  tracker_issue_id, created_at, updated_at`;

/** Tasks: tracker issues brought into the service, keyed by identifier, with the agent's status and priority. */
export class Tasks {
  private readonly statements;

  constructor(db: ServiceDatabase) {
    this.statements = {
      upsert: db.prepare(
        `INSERT INTO tasks (task_key, title, status, priority, repo_remote_url, user_email, parent_key, team_id,
           tracker_issue_id, created_at, updated_at)
         VALUES (@task_key, @title, @status, @priority, @repo_remote_url, @user_email, @parent_key, @team_id,
           @tracker_issue_id, @now, @now)
         ON CONFLICT (task_key) DO UPDATE SET title = excluded.title, status = excluded.status,
           priority = excluded.priority, repo_remote_url = coalesce(excluded.repo_remote_url, repo_remote_url),
           user_email = coalesce(excluded.user_email, user_email), parent_key = excluded.parent_key,
           team_id = excluded.team_id, tracker_issue_id = excluded.tracker_issue_id, updated_at = excluded.updated_at`,
      ),
      byKey: db.prepare(`SELECT ${TASK_COLUMNS} FROM tasks WHERE task_key = ?`),
      subtree: db.prepare(
        `WITH RECURSIVE tree (task_key, depth) AS (
           SELECT task_key, 0 FROM tasks WHERE task_key = ?
           UNION SELECT child.task_key, tree.depth + 1 FROM tasks child JOIN tree ON child.parent_key = tree.task_key
           WHERE tree.depth < 100
         )
         SELECT ${TASK_COLUMNS} FROM tasks WHERE task_key IN (SELECT task_key FROM tree)`,
      ),
      change: db.prepare(
        `UPDATE tasks SET status = coalesce(@status, status), priority = coalesce(@priority, priority),
           repo_remote_url = coalesce(@repo_remote_url, repo_remote_url),
           user_email = coalesce(@user_email, user_email), updated_at = @now
         WHERE task_key = @task_key`,
      ),
    };
  }

  /** Creates or refreshes a task from its tracker issue; a URL or email not given keeps the stored one. */
  save(task: TaskImport): void {
    this.statements.upsert.run({ ...task, now: nowIso() });
  }

  find(taskKey: string): TaskRecord | null {
    return (this.statements.byKey.get(taskKey) as TaskRecord | undefined) ?? null;
  }

  /** The task and every descendant (by parent key, at any depth; a cycle stops at depth 100). */
  subtree(taskKey: string): TaskRecord[] {
    return this.statements.subtree.all(taskKey) as TaskRecord[];
  }

  change(taskKey: string, change: TaskChange): void {
    this.statements.change.run({
      task_key: taskKey,
      status: change.status ?? null,
      priority: change.priority ?? null,
      repo_remote_url: change.repo_remote_url ?? null,
      user_email: change.user_email ?? null,
      now: nowIso(),
    });
  }
}
