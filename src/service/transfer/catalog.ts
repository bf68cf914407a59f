/**
 * Every table `flowsync service export` moves, in the order an import inserts them: a table before those that
 * refer to it (repos before flows before flow_files, workflow_state_teams before workflow_states, repos before
 * file_versions), as foreign keys are checked row by row. Each table's columns are listed in a fixed order, the
 * same on both databases (db/migrations.ts and db/postgres-migrations.ts), and its rows are read in the order of
 * `key`, so that two exports of the same data are the same bytes whichever database they come from.
 *
 * Left out on purpose: SQLite's FTS5 table (its triggers fill it again as tracker_issues is imported), Postgres's
 * generated `words` column (computed again the same way), and each database's own bookkeeping (user_version,
 * flowsync_schema, sqlite_sequence, members_epoch: a new database starts its own count).
 * test/cli/service-transfer.test.ts checks that every other column of both schemas is listed here, so a migration
 * that adds one cannot be forgotten. A column added later goes at the end of its table's list, and the format's
 * version goes up (format.ts: an import reads every older format).
 */
import type { Sql } from '../db/open.ts';

export interface TransferTable {
  name: string;
  columns: readonly string[];
  /**
   * The rows' order: the primary key (access_tokens has none, and its one unique column serves). Text keys are
   * compared byte by byte (SQLite's BINARY; Postgres `COLLATE "C"`), whatever the Postgres database's locale.
   */
  key: readonly string[];
  /** The key is a number, not text. */
  numericKey?: true;
  /**
   * The column Postgres numbers from an identity sequence: after an import the sequence is moved past the largest
   * imported value, or the service's next insert would take a number already used. (SQLite takes max + 1 itself.)
   */
  identity?: string;
}

export const TRANSFER_TABLES: readonly TransferTable[] = [
  { name: 'access_tokens', columns: ['kind', 'sha256', 'created_at'], key: ['sha256'] },
  // The members (format 2): their tokens' and invites' SHA-256 only, as access_tokens'.
  {
    name: 'members',
    columns: ['id', 'name', 'role', 'shared', 'created_at', 'created_by', 'removed_at', 'removed_by'],
    key: ['id'],
  },
  {
    name: 'member_tokens',
    columns: [
      'id',
      'member_id',
      'sha256',
      'label',
      'created_at',
      'expires_at',
      'revoked_at',
      'revoked_by',
      'renewed_from',
      'renewed_at',
    ],
    key: ['id'],
  },
  {
    name: 'invites',
    columns: [
      'id',
      'member_id',
      'sha256',
      'token_days',
      'created_at',
      'created_by',
      'expires_at',
      'failures',
      'redeemed_at',
      'token_id',
      'voided_at',
    ],
    key: ['id'],
  },
  { name: 'repos', columns: ['id', 'owner', 'name', 'created_at'], key: ['id'] },
  {
    name: 'flows',
    columns: ['id', 'repo_id', 'flow_path', 'hash', 'created_at', 'updated_at'],
    key: ['id'],
  },
  {
    name: 'flow_files',
    columns: ['id', 'flow_id', 'path', 'hash', 'content', 'size', 'created_at', 'updated_at'],
    key: ['id'],
  },
  {
    name: 'repo_configs',
    columns: ['owner', 'name', 'config', 'updated_at', 'written_by', 'member_id'],
    key: ['owner', 'name'],
  },
  {
    name: 'tasks',
    columns: [
      'task_key',
      'title',
      'status',
      'priority',
      'repo_remote_url',
      'user_email',
      'parent_key',
      'team_id',
      'tracker_issue_id',
      'created_at',
      'updated_at',
    ],
    key: ['task_key'],
  },
  { name: 'workflow_state_teams', columns: ['team_id', 'updated_at'], key: ['team_id'] },
  {
    name: 'workflow_states',
    columns: ['team_id', 'id', 'name', 'normalized_name', 'position'],
    key: ['team_id', 'id'],
  },
  {
    name: 'tracker_issues',
    columns: [
      'seq',
      'id',
      'identifier',
      'title',
      'description',
      'priority',
      'priority_label',
      'state_name',
      'team_id',
      'project_id',
      'parent_id',
      'assignee_id',
      'archived_at',
      'created_at',
      'updated_at',
      'data',
    ],
    key: ['seq'],
    numericKey: true,
    identity: 'seq',
  },
  {
    name: 'tracker_projects',
    columns: ['seq', 'id', 'name', 'description', 'state', 'team_ids', 'created_at', 'updated_at', 'data'],
    key: ['seq'],
    numericKey: true,
    identity: 'seq',
  },
  { name: 'tracker_users', columns: ['id', 'name', 'email', 'data'], key: ['id'] },
  {
    // `rowid` is the attachments' arrival order (an issue lists them in it): SQLite's implicit rowid, a column
    // of that name on Postgres. Kept, so the order survives the move.
    name: 'tracker_attachments',
    columns: ['rowid', 'id', 'issue_id', 'title', 'url', 'data', 'updated_at'],
    key: ['id'],
    identity: 'rowid',
  },
  {
    name: 'webhook_events',
    columns: ['id', 'team', 'status', 'type', 'action', 'applied', 'payload', 'trace_id', 'received_at'],
    key: ['id'],
    numericKey: true,
    identity: 'id',
  },
  {
    name: 'api_keys',
    columns: ['hash', 'api_key_tid', 'name', 'prefix_4', 'suffix_4', 'user_id', 'created_at'],
    key: ['hash'],
  },
  {
    name: 'key_activity_log',
    columns: [
      'id',
      'api_key_tid',
      'type',
      'hash',
      'name',
      'prefix_4',
      'suffix_4',
      'user_id',
      'ts',
      'trace_id',
      'logged_at',
    ],
    key: ['id'],
    numericKey: true,
    identity: 'id',
  },
  {
    name: 'slug_log',
    columns: ['id', 'slug', 'type', 'payload_slug', 'payload_type', 'ts', 'trace_id', 'logged_at'],
    key: ['id'],
    numericKey: true,
    identity: 'id',
  },
  {
    name: 'file_versions',
    columns: [
      'version',
      'repo_id',
      'flow_path',
      'path',
      'hash',
      'content',
      'size',
      'written_at',
      'written_by',
      'writer_kind',
      'replaced_at',
      'conflict_copy',
      'member_id',
      'token_id',
    ],
    key: ['version'],
    numericKey: true,
    identity: 'version',
  },
  {
    name: 'history_purges',
    columns: [
      'id',
      'repo_id',
      'flow_path',
      'path',
      'version',
      'versions',
      'purged_at',
      'purged_by',
      'member_id',
    ],
    key: ['id'],
    numericKey: true,
    identity: 'id',
  },
  {
    // The audit log (format 2), moved whole: its hash chain verifies on the other side.
    name: 'audit_events',
    columns: [
      'id',
      'at',
      'actor_member_id',
      'actor_token_id',
      'actor_local',
      'action',
      'target',
      'detail',
      'trace_id',
      'prev_sha256',
      'sha256',
    ],
    key: ['id'],
    numericKey: true,
  },
  {
    // When the size cap last cut a repository's history: moved with it, so the cut is still said.
    name: 'history_pruned',
    columns: ['repo_id', 'pruned_at', 'cap_bytes', 'versions'],
    key: ['repo_id'],
  },
];

/** How many rows a table of the catalog holds (an export's header, an import's checks). */
export async function countRows(sql: Sql, table: string): Promise<number> {
  return (await sql.get<{ n: number }>(`SELECT count(*) AS n FROM ${table}`))!.n;
}
