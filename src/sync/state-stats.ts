import type Database from 'better-sqlite3';
import type { CachedStat } from './state-records.ts';

/** What the state knows of files' stats and hashes: the cache that spares hashing a file that did not change. */
export class StatCache {
  private readonly statements;

  constructor(db: Database.Database) {
    const columns = 'size, mtime_ms AS mtimeMs, ctime_ms AS ctimeMs, ino, local_hash AS localHash';
    this.statements = {
      one: db.prepare(`SELECT ${columns} FROM files WHERE repo_id = ? AND flow_path = ? AND path = ?`),
      ofFlow: db.prepare(`SELECT path, ${columns} FROM files WHERE repo_id = ? AND flow_path = ?`),
    };
  }

  /** One file's stat and hash, if the state has any. */
  of(repoId: number, flowPath: string, path: string): CachedStat | undefined {
    return this.statements.one.get(repoId, flowPath, path) as CachedStat | undefined;
  }

  /**
   * Every file of one flow, in one query: a rescan compares a flow's files with it. One query per file was the
   * rescan's largest cost (100,000 unchanged files: 1.4 s of a 1.9 s rescan at a restart).
   */
  ofFlow(repoId: number, flowPath: string): Map<string, CachedStat> {
    // Each row as it comes (its path too): copying it without the path made two more objects per file.
    const stats = new Map<string, CachedStat>();
    for (const row of this.statements.ofFlow.all(repoId, flowPath) as (CachedStat & { path: string })[])
      stats.set(row.path, row);
    return stats;
  }
}
