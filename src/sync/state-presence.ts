import type Database from 'better-sqlite3';

/**
 * The flows whose files appeared on disk or went from it since the look at the service last compared them:
 * "N files on the service are not in this checkout" is of the disk, and would stay for minutes after a branch
 * switch brought every file back, because the quick look compares only the flows whose service aggregate changed.
 * Marked by two triggers of this connection on the files table (TEMP: kept in memory, as ackedChanges is, never
 * in the state file), so every writer of the disk's side (a scan, the watcher, a file gone, a file the agent wrote)
 * marks it, and none can forget to. A mark costs one row per flow; a file edited in place marks nothing.
 */
/**
 * The mark, once per flow, by a test rather than a conflict: a trigger's conflict clause gives way to that of the
 * statement that fired it, and with INSERT OR IGNORE the agent's round failed with "UNIQUE constraint failed:
 * presence_changed" once 40 deletions were held (test/e2e/waiting-for-you.test.ts).
 */
const MARK = `INSERT INTO presence_changed (repo_id, flow_path) SELECT new.repo_id, new.flow_path
  WHERE NOT EXISTS (SELECT 1 FROM presence_changed WHERE repo_id = new.repo_id AND flow_path = new.flow_path);`;

export class PresenceMarks {
  private readonly statements;

  constructor(db: Database.Database) {
    db.exec(`
      CREATE TEMP TABLE IF NOT EXISTS presence_changed (
        repo_id INTEGER NOT NULL, flow_path TEXT NOT NULL, PRIMARY KEY (repo_id, flow_path)) WITHOUT ROWID;
      CREATE TEMP TRIGGER IF NOT EXISTS files_appeared AFTER INSERT ON main.files
        WHEN new.local_hash IS NOT NULL
        BEGIN ${MARK} END;
      CREATE TEMP TRIGGER IF NOT EXISTS files_presence AFTER UPDATE OF local_hash ON main.files
        WHEN (old.local_hash IS NULL) <> (new.local_hash IS NULL)
        BEGIN ${MARK} END;`);
    this.statements = {
      list: db.prepare('SELECT flow_path FROM presence_changed WHERE repo_id = ? ORDER BY flow_path').pluck(),
      forget: db.prepare('DELETE FROM presence_changed WHERE repo_id = ? AND flow_path = ?'),
    };
  }

  /** The flows whose files appeared on disk or went from it since `forget` was told of them. */
  changed(repoId: number): string[] {
    return this.statements.list.all(repoId) as string[];
  }

  /** These flows were compared with the service: what appears or goes after this is the next look's. */
  forget(repoId: number, flowPaths: readonly string[]): void {
    for (const flowPath of flowPaths) this.statements.forget.run(repoId, flowPath);
  }
}
