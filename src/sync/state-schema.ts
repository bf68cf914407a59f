import type Database from 'better-sqlite3';
import { ACKED_AGGREGATES_SCHEMA } from './state-aggregates.ts';

/*
 * The state's tables and their migrations, in the order they were added: a state file made by any older flowsync
 * is brought to the newest by running what it lacks (its `user_version` says how many it has), in one transaction.
 */

const SCHEMA = [
  `CREATE TABLE repos (
    id INTEGER PRIMARY KEY,
    root TEXT NOT NULL,
    service TEXT NOT NULL,
    owner TEXT NOT NULL,
    name TEXT NOT NULL,
    last_sync_at TEXT,
    last_error TEXT,
    UNIQUE (root, service)
  );
  CREATE TABLE files (
    repo_id INTEGER NOT NULL REFERENCES repos (id) ON DELETE CASCADE,
    flow_path TEXT NOT NULL,
    path TEXT NOT NULL,
    size INTEGER,
    mtime_ms REAL,
    local_hash TEXT,
    warning TEXT,
    acked_hash TEXT,
    file_id TEXT,
    PRIMARY KEY (repo_id, flow_path, path)
  ) WITHOUT ROWID;
  CREATE TABLE rejected_flows (
    repo_id INTEGER NOT NULL REFERENCES repos (id) ON DELETE CASCADE,
    flow_path TEXT NOT NULL,
    message TEXT NOT NULL,
    signature TEXT NOT NULL,
    PRIMARY KEY (repo_id, flow_path)
  ) WITHOUT ROWID;`,
  // Sent but not answered: the service may hold what the files table does not say it holds (a lost answer).
  `CREATE TABLE in_flight (
    repo_id INTEGER NOT NULL REFERENCES repos (id) ON DELETE CASCADE,
    flow_path TEXT NOT NULL,
    PRIMARY KEY (repo_id, flow_path)
  ) WITHOUT ROWID;`,
  // Rows to forget (gone, and never on the service): dropForgotten ran after every hashed chunk and read the whole
  // table each time, 20 % of the main thread's time in a first sync of 100,000 files.
  `CREATE INDEX files_forgotten ON files (repo_id) WHERE local_hash IS NULL AND acked_hash IS NULL;`,
  // The cache compares ctime and inode too (isUnchanged, in the reconciler). Rows from before have neither: each
  // file is read once more after the upgrade, and sends nothing unless it changed.
  `ALTER TABLE files ADD COLUMN ctime_ms REAL;
   ALTER TABLE files ADD COLUMN ino REAL;`,
  // A file the service did not write because its version there is not the one this agent last acknowledged (a
  // teammate's edit, a restored backup): settled by its user (keep mine, take the service's), never resent as it
  // is. `service_hash` null: the service has no such file. `sources`: the one
  // checkout a repository is synced from, per service (a worktree or a second clone is not mixed in). `bases`: whether this repository's service said once
  // that it takes bases, so that a later answer without it (another service put at the address) cannot turn its protection off.
  `CREATE TABLE conflicts (
    repo_id INTEGER NOT NULL REFERENCES repos (id) ON DELETE CASCADE,
    flow_path TEXT NOT NULL,
    path TEXT NOT NULL,
    base_hash TEXT,
    service_hash TEXT,
    sent_hash TEXT,
    written_by TEXT,
    written_at TEXT,
    found_at TEXT NOT NULL,
    PRIMARY KEY (repo_id, flow_path, path)
  ) WITHOUT ROWID;
  ALTER TABLE repos ADD COLUMN bases INTEGER;
  CREATE TABLE sources (
    service TEXT NOT NULL,
    owner TEXT NOT NULL,
    name TEXT NOT NULL,
    root TEXT NOT NULL,
    PRIMARY KEY (service, owner, name)
  ) WITHOUT ROWID;
  CREATE INDEX files_deletions ON files (repo_id)
    WHERE acked_hash IS NOT NULL AND (local_hash IS NULL OR warning IS NOT NULL);`,
  // Only a file gone from disk is a deletion (three-way.ts): a file on disk that is not sent (over 1 MiB,
  // binary, a link…) keeps its version on the service. The index holds the deletions alone again.
  `DROP INDEX files_deletions;
  CREATE INDEX files_deletions ON files (repo_id) WHERE acked_hash IS NOT NULL AND local_hash IS NULL;`,
  // A checkout's own random id: `user@host:path` is shared by machines made from one image, and each took
  // the other's versions for its own (a refusal read as a lost acknowledgement, and written over).
  `ALTER TABLE repos ADD COLUMN checkout_id TEXT;`,
  // The repository's config as this checkout last synced it (`base_hash`: what its next update names as its base)
  // and the conflict a stale one was refused with (`conflict`: the service's config, who wrote it, when; JSON),
  // settled by its user in Repo config. The config is a document of its own, not a file of a flow.
  `CREATE TABLE repo_config (
    repo_id INTEGER PRIMARY KEY REFERENCES repos (id) ON DELETE CASCADE,
    base_hash TEXT,
    conflict TEXT
  );`,
  // A conflict whose base version the service no longer has (it went back in time): never "behind".
  `ALTER TABLE conflicts ADD COLUMN lost INTEGER NOT NULL DEFAULT 0;`,
  // A conflict its user's own act raised (a restore over a newer version, a file deleted there before the first
  // round): a conflict whatever the hashes say, until settled (three-way.ts fileSide's `raised`).
  `ALTER TABLE conflicts ADD COLUMN raised INTEGER NOT NULL DEFAULT 0;`,
  // A deletion waiting for its user: 'held' in a held set, 'confirmed' on its user's word until the
  // service takes it. In the state, so that a restart neither releases a held set nor forgets a confirmation.
  `ALTER TABLE files ADD COLUMN deletion TEXT;
  CREATE INDEX files_marked ON files (repo_id) WHERE deletion IS NOT NULL;`,
  // What a flow sent without an answer carried, file by file (`hash` null: a deletion): the evidence that a
  // version the service holds under this checkout's id is its own lost acknowledgement (reconcile.ts's
  // isOwnVersion), not a copy of this checkout's (one id) writing over it. Kept while the flow is in flight.
  `CREATE TABLE in_flight_files (
    repo_id INTEGER NOT NULL REFERENCES repos (id) ON DELETE CASCADE,
    flow_path TEXT NOT NULL,
    path TEXT NOT NULL,
    hash TEXT,
    PRIMARY KEY (repo_id, flow_path, path)
  ) WITHOUT ROWID;`,
  // Git's motions held for their user: each file as git left it (`hash` null: git deleted it), the change
  // set's name (`branch cleanup`), and its user's word ('held', 'confirmed': sent on their word, 'kept': kept here,
  // not sent while it stays as git left it). `shared_with`: the other writers the service named for this repository
  // (JSON, a few), so that a service once seen shared stays so across restarts.
  `CREATE TABLE git_held (
    repo_id INTEGER NOT NULL REFERENCES repos (id) ON DELETE CASCADE,
    flow_path TEXT NOT NULL,
    path TEXT NOT NULL,
    hash TEXT,
    name TEXT NOT NULL,
    decision TEXT NOT NULL DEFAULT 'held',
    PRIMARY KEY (repo_id, flow_path, path)
  ) WITHOUT ROWID;
  ALTER TABLE repos ADD COLUMN shared_with TEXT;`,
  // The files with a warning (not sent: too large, unreadable…), few: listed by it (INDEXED BY) at each status, where
  // SQLite walked the repository's whole key range for its order (22 ms at 100,000 files).
  `CREATE INDEX files_warned ON files (repo_id) WHERE warning IS NOT NULL;`,
  // Each repository's counts as the agent that last wrote the state left them (JSON; state-counts.ts).
  `ALTER TABLE repos ADD COLUMN counts TEXT;`,
  // Each flow's aggregate of what this checkout acknowledged, kept by triggers (state-aggregates.ts).
  ACKED_AGGREGATES_SCHEMA,
];

/** Brings a state database to the newest schema, in one transaction. */
export function migrateState(db: Database.Database): void {
  const version = db.pragma('user_version', { simple: true }) as number;
  db.transaction(() => {
    for (let v = version; v < SCHEMA.length; v++) {
      db.exec(SCHEMA[v]!);
      db.pragma(`user_version = ${v + 1}`);
    }
  })();
}
