import type { TaskRecord } from '../../protocol/index.ts';
import type { Sql } from '../db/open.ts';
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
  constructor(private readonly sql: Sql) {}

  /** Creates or refreshes a task from its tracker issue; a URL or email not given keeps the stored one. */
  async save(task: TaskImport): Promise<void> {
    await this.sql.run(
      `INSERT INTO tasks (task_key, title, status, priority, repo_remote_url, user_email, parent_key, team_id,
         tracker_issue_id, created_at, updated_at)
       VALUES (@task_key, @title, @status, @priority, @repo_remote_url, @user_email, @parent_key, @team_id,
         @tracker_issue_id, @now, @now)
       ON CONFLICT (task_key) DO UPDATE SET title = excluded.title, status = excluded.status,
         priority = excluded.priority, repo_remote_url = coalesce(excluded.repo_remote_url, tasks.repo_remote_url),
         user_email = coalesce(excluded.user_email, tasks.user_email), parent_key = excluded.parent_key,
         team_id = excluded.team_id, tracker_issue_id = excluded.tracker_issue_id, updated_at = excluded.updated_at`,
      {
        task_key: task.task_key,
        title: task.title,
        status: task.status,
        priority: task.priority,
        repo_remote_url: task.repo_remote_url,
        user_email: task.user_email,
        parent_key: task.parent_key,
        team_id: task.team_id,
        tracker_issue_id: task.tracker_issue_id,
        now: nowIso(),
      },
    );
  }

  async find(taskKey: string): Promise<TaskRecord | null> {
    const found = await this.sql.get<TaskRecord>(`SELECT ${TASK_COLUMNS} FROM tasks WHERE task_key = ?`, [
      taskKey,
    ]);
    return found ?? null;
  }

  /** The task and every descendant (by parent key, at any depth; a cycle stops at depth 100). */
  subtree(taskKey: string): Promise<TaskRecord[]> {
    return this.sql.all<TaskRecord>(
      `WITH RECURSIVE tree (task_key, depth) AS (
         SELECT task_key, 0 FROM tasks WHERE task_key = ?
         UNION SELECT child.task_key, tree.depth + 1 FROM tasks child JOIN tree ON child.parent_key = tree.task_key
         WHERE tree.depth < 100
       )
       SELECT ${TASK_COLUMNS} FROM tasks WHERE task_key IN (SELECT task_key FROM tree)`,
      [taskKey],
    );
  }

  async change(taskKey: string, change: TaskChange): Promise<void> {
    await this.sql.run(
      `UPDATE tasks SET status = coalesce(@status, status), priority = coalesce(@priority, priority),
         repo_remote_url = coalesce(@repo_remote_url, repo_remote_url),
         user_email = coalesce(@user_email, user_email), updated_at = @now
       WHERE task_key = @task_key`,
      {
        task_key: taskKey,
        status: change.status ?? null,
        priority: change.priority ?? null,
        repo_remote_url: change.repo_remote_url ?? null,
        user_email: change.user_email ?? null,
        now: nowIso(),
      },
    );
  }
}
