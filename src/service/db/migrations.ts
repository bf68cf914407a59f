/**
 * The service's SQLite schema, one entry per version (PRAGMA user_version). Append only: a shipped migration is never
 * edited, so every database, however old, reaches the same schema.
 */
export const SQLITE_MIGRATIONS: readonly string[] = [
  /* 1: everything the 20 functions store */ `
  CREATE TABLE access_tokens (
    kind TEXT NOT NULL CHECK (kind IN ('user', 'admin')),
    sha256 TEXT NOT NULL UNIQUE,
    created_at TEXT NOT NULL
  );

  CREATE TABLE repos (
    id TEXT PRIMARY KEY,
    owner TEXT NOT NULL,
    name TEXT NOT NULL,
    created_at TEXT NOT NULL,
    UNIQUE (owner, name)
  );
  CREATE TABLE flows (
    id TEXT PRIMARY KEY,
    repo_id TEXT NOT NULL REFERENCES repos (id),
    flow_path TEXT NOT NULL,
    hash TEXT NOT NULL,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL,
    UNIQUE (repo_id, flow_path)
  );
  CREATE TABLE flow_files (
    id TEXT PRIMARY KEY,
    flow_id TEXT NOT NULL REFERENCES flows (id) ON DELETE CASCADE,
    path TEXT NOT NULL,
    hash TEXT NOT NULL,
    content TEXT NOT NULL,
    size INTEGER NOT NULL,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL,
    UNIQUE (flow_id, path)
  );

  CREATE TABLE repo_configs (
    owner TEXT NOT NULL,
    name TEXT NOT NULL,
    config TEXT NOT NULL,
    updated_at TEXT NOT NULL,
    PRIMARY KEY (owner, name)
  );

  CREATE TABLE tasks (
    task_key TEXT PRIMARY KEY,
    title TEXT NOT NULL,
    status TEXT,
    priority TEXT,
    repo_remote_url TEXT,
    user_email TEXT,
    parent_key TEXT,
    team_id TEXT,
    tracker_issue_id TEXT NOT NULL,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL
  );
  CREATE INDEX tasks_by_parent ON tasks (parent_key);

  CREATE TABLE workflow_state_teams (
    team_id TEXT PRIMARY KEY,
    updated_at TEXT NOT NULL
  );
  CREATE TABLE workflow_states (
    team_id TEXT NOT NULL REFERENCES workflow_state_teams (team_id) ON DELETE CASCADE,
    id TEXT NOT NULL,
    name TEXT NOT NULL,
    normalized_name TEXT NOT NULL,
    position INTEGER NOT NULL,
    PRIMARY KEY (team_id, id)
  );

  CREATE TABLE tracker_issues (
    seq INTEGER PRIMARY KEY,
    id TEXT NOT NULL UNIQUE,
    identifier TEXT NOT NULL UNIQUE,
    title TEXT NOT NULL,
    description TEXT,
    priority REAL,
    priority_label TEXT,
    state_name TEXT,
    team_id TEXT,
    project_id TEXT,
    parent_id TEXT,
    assignee_id TEXT,
    archived_at TEXT,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL,
    data TEXT NOT NULL
  );
  CREATE INDEX tracker_issues_by_parent ON tracker_issues (parent_id);
  CREATE VIRTUAL TABLE tracker_issues_fts USING fts5 (
    identifier, title, description,
    content = 'tracker_issues', content_rowid = 'seq'
  );
  CREATE TRIGGER tracker_issues_fts_insert AFTER INSERT ON tracker_issues BEGIN
    INSERT INTO tracker_issues_fts (rowid, identifier, title, description)
    VALUES (new.seq, new.identifier, new.title, coalesce(new.description, ''));
  END;
  CREATE TRIGGER tracker_issues_fts_delete AFTER DELETE ON tracker_issues BEGIN
    INSERT INTO tracker_issues_fts (tracker_issues_fts, rowid, identifier, title, description)
    VALUES ('delete', old.seq, old.identifier, old.title, coalesce(old.description, ''));
  END;
  CREATE TRIGGER tracker_issues_fts_update AFTER UPDATE ON tracker_issues BEGIN
    INSERT INTO tracker_issues_fts (tracker_issues_fts, rowid, identifier, title, description)
    VALUES ('delete', old.seq, old.identifier, old.title, coalesce(old.description, ''));
    INSERT INTO tracker_issues_fts (rowid, identifier, title, description)
    VALUES (new.seq, new.identifier, new.title, coalesce(new.description, ''));
  END;

  CREATE TABLE tracker_projects (
    seq INTEGER PRIMARY KEY,
    id TEXT NOT NULL UNIQUE,
    name TEXT NOT NULL,
    description TEXT,
    state TEXT,
    team_ids TEXT NOT NULL,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL,
    data TEXT NOT NULL
  );
  CREATE TABLE tracker_users (
    id TEXT PRIMARY KEY,
    name TEXT,
    email TEXT,
    data TEXT NOT NULL
  );
  CREATE TABLE tracker_attachments (
    id TEXT PRIMARY KEY,
    issue_id TEXT NOT NULL,
    title TEXT,
    url TEXT,
    data TEXT NOT NULL,
    updated_at TEXT NOT NULL
  );
  CREATE INDEX tracker_attachments_by_issue ON tracker_attachments (issue_id);
  CREATE TABLE webhook_events (
    id INTEGER PRIMARY KEY,
    team TEXT NOT NULL,
    status TEXT NOT NULL,
    type TEXT NOT NULL,
    action TEXT NOT NULL,
    applied INTEGER NOT NULL,
    payload TEXT NOT NULL,
    trace_id TEXT NOT NULL,
    received_at TEXT NOT NULL
  );

  CREATE TABLE api_keys (
    hash TEXT PRIMARY KEY,
    api_key_tid TEXT NOT NULL,
    name TEXT NOT NULL,
    prefix_4 TEXT NOT NULL,
    suffix_4 TEXT NOT NULL,
    user_id TEXT NOT NULL,
    created_at TEXT NOT NULL
  );
  CREATE TABLE key_activity_log (
    id INTEGER PRIMARY KEY,
    api_key_tid TEXT NOT NULL,
    type TEXT NOT NULL,
    hash TEXT NOT NULL,
    name TEXT NOT NULL,
    prefix_4 TEXT NOT NULL,
    suffix_4 TEXT NOT NULL,
    user_id TEXT NOT NULL,
    ts REAL NOT NULL,
    trace_id TEXT NOT NULL,
    logged_at TEXT NOT NULL
  );
  CREATE TABLE slug_log (
    id INTEGER PRIMARY KEY,
    slug TEXT NOT NULL,
    type TEXT NOT NULL,
    payload_slug TEXT NOT NULL,
    payload_type TEXT NOT NULL,
    ts REAL NOT NULL,
    trace_id TEXT NOT NULL,
    logged_at TEXT NOT NULL
  );
  `,
  /* 2: history (every version a write replaces, deletions as tombstones) */ `
  CREATE TABLE file_versions (
    version INTEGER PRIMARY KEY AUTOINCREMENT,
    repo_id TEXT NOT NULL REFERENCES repos (id),
    flow_path TEXT NOT NULL,
    path TEXT NOT NULL,
    hash TEXT,
    content TEXT,
    size INTEGER NOT NULL,
    written_at TEXT NOT NULL,
    written_by TEXT,
    writer_kind TEXT,
    replaced_at TEXT
  );
  CREATE INDEX file_versions_file ON file_versions (repo_id, flow_path, path, version);
  CREATE INDEX file_versions_replaced ON file_versions (repo_id, replaced_at) WHERE replaced_at IS NOT NULL;
  INSERT INTO file_versions (repo_id, flow_path, path, hash, content, size, written_at)
    SELECT fl.repo_id, fl.flow_path, f.path, f.hash, NULL, f.size, f.updated_at
    FROM flow_files f JOIN flows fl ON fl.id = f.flow_id ORDER BY fl.flow_path, f.path;
  `,
  /* 3: an identifier is looked up in any case: lower() in SQL both databases speak, and its index */ `
  CREATE INDEX tracker_issues_by_lower_identifier ON tracker_issues (lower(identifier));
  `,
  /* 4: what an operator's purge of a file's history left: who purged, when, how many versions */ `
  CREATE TABLE history_purges (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    repo_id TEXT NOT NULL REFERENCES repos (id),
    flow_path TEXT NOT NULL,
    path TEXT NOT NULL,
    version INTEGER,
    versions INTEGER NOT NULL,
    purged_at TEXT NOT NULL,
    purged_by TEXT
  );
  CREATE INDEX history_purges_file ON history_purges (repo_id, flow_path, path, id);
  `,
  /* 5: a checkout's bytes kept before it took the service's version (keep_copy) */ `
  ALTER TABLE file_versions ADD COLUMN conflict_copy INTEGER;
  `,
  /* 6: who wrote a repository's config, for the conflict a write on a stale base is refused with */ `
  ALTER TABLE repo_configs ADD COLUMN written_by TEXT;
  `,
  /* 7: when the size cap last removed versions of a repository, said to its users */ `
  CREATE TABLE history_pruned (
    repo_id TEXT PRIMARY KEY REFERENCES repos (id),
    pruned_at TEXT NOT NULL,
    cap_bytes INTEGER NOT NULL,
    versions INTEGER NOT NULL
  );
  `,
  /* 8: the members of a team's service: each person's own tokens (their SHA-256 only), one-time
   * invites, and who each history row's call came from, decided by the credential */ `
  CREATE TABLE members (
    id TEXT PRIMARY KEY,
    name TEXT NOT NULL UNIQUE,
    role TEXT NOT NULL CHECK (role IN ('read', 'write', 'operator')),
    shared INTEGER NOT NULL DEFAULT 0,
    created_at TEXT NOT NULL,
    created_by TEXT,
    removed_at TEXT,
    removed_by TEXT
  );
  CREATE TABLE member_tokens (
    id TEXT PRIMARY KEY,
    member_id TEXT NOT NULL REFERENCES members (id),
    sha256 TEXT NOT NULL UNIQUE,
    label TEXT NOT NULL,
    created_at TEXT NOT NULL,
    expires_at TEXT NOT NULL,
    revoked_at TEXT,
    revoked_by TEXT
  );
  CREATE INDEX member_tokens_member ON member_tokens (member_id);
  CREATE TABLE invites (
    id TEXT PRIMARY KEY,
    member_id TEXT NOT NULL REFERENCES members (id),
    sha256 TEXT NOT NULL UNIQUE,
    token_days INTEGER NOT NULL,
    created_at TEXT NOT NULL,
    created_by TEXT,
    expires_at TEXT NOT NULL,
    failures INTEGER NOT NULL DEFAULT 0,
    redeemed_at TEXT,
    token_id TEXT,
    voided_at TEXT
  );
  CREATE TABLE members_epoch (
    id INTEGER PRIMARY KEY CHECK (id = 1),
    epoch INTEGER NOT NULL
  );
  INSERT INTO members_epoch (id, epoch) VALUES (1, 0);
  ALTER TABLE file_versions ADD COLUMN member_id TEXT;
  ALTER TABLE file_versions ADD COLUMN token_id TEXT;
  ALTER TABLE history_purges ADD COLUMN member_id TEXT;
  ALTER TABLE repo_configs ADD COLUMN member_id TEXT;
  `,
  /* 9: the audit log: operator actions and mass changes, append-only, each row hashed with the last */ `
  CREATE TABLE audit_events (
    id INTEGER PRIMARY KEY,
    at TEXT NOT NULL,
    actor_member_id TEXT,
    actor_token_id TEXT,
    actor_local TEXT,
    action TEXT NOT NULL,
    target TEXT,
    detail TEXT,
    trace_id TEXT,
    prev_sha256 TEXT NOT NULL,
    sha256 TEXT NOT NULL
  );
  CREATE INDEX audit_events_at ON audit_events (at);
  `,
  /* 10: a token renewed by its own holder names the one it replaces, which works until the new one is
   * first used or a day after its renewal (renewed_at) */ `
  ALTER TABLE member_tokens ADD COLUMN renewed_from TEXT;
  ALTER TABLE member_tokens ADD COLUMN renewed_at TEXT;
  `,
];
