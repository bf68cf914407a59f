import type Database from 'better-sqlite3';

/** A file of a flow, as the state names it. */
export interface FlowFile {
  flowPath: string;
  path: string;
}

/** What deletionVerdict is told of the deletions waiting now (safety.ts's DeletionFacts). */
export interface WaitingDeletions {
  /** Files gone from disk that the service has, not in conflict. */
  waiting: number;
  /** Of them, confirmed by their user: they go in every round until the service took them. */
  confirmed: number;
  /** Of them, in a held set not confirmed. */
  held: number;
}

/**
 * The deletions that wait for their user, marked on their files rows (`files.deletion`): 'held', in a
 * held set; 'confirmed', on its user's word. A mark lasts while its file is a deletion waiting (`waitingSql`: gone
 * from disk, acknowledged, not in conflict): sent (the row goes), put back on disk or in conflict, it is dropped
 * at the next look, so a partial undo shrinks the held set and a deletion made later is a new one.
 */
export class DeletionMarks {
  private readonly statements;

  constructor(
    private readonly db: Database.Database,
    waitingSql: string,
  ) {
    this.statements = {
      dropStale: db.prepare(
        `UPDATE files INDEXED BY files_marked SET deletion = NULL
         WHERE repo_id = ? AND deletion IS NOT NULL AND NOT (${waitingSql})`,
      ),
      // By the partial index of deletions: it costs what it finds (see state.ts's deletionCount).
      count: db.prepare(
        `SELECT count(*) AS waiting, count(CASE WHEN deletion = 'confirmed' THEN 1 END) AS confirmed,
           count(CASE WHEN deletion = 'held' THEN 1 END) AS held
         FROM files INDEXED BY files_deletions WHERE repo_id = ? AND ${waitingSql}`,
      ),
      // Only the deletions new to the set: rewriting the whole set at each round while 5,000 were held took 100 ms
      // among 100,000 files, the new ones alone 20 ms (as `look`).
      hold: db.prepare(
        `UPDATE files INDEXED BY files_deletions SET deletion = 'held'
         WHERE repo_id = ? AND ${waitingSql} AND deletion IS NULL`,
      ),
      confirmAll: db.prepare(
        `UPDATE files INDEXED BY files_deletions SET deletion = 'confirmed' WHERE repo_id = ? AND ${waitingSql}
         RETURNING flow_path AS flowPath, path`,
      ),
      confirmOne: db.prepare(
        `UPDATE files SET deletion = 'confirmed' WHERE repo_id = ? AND flow_path = ? AND path = ? AND ${waitingSql}
         RETURNING flow_path AS flowPath, path`,
      ),
      confirmed: db.prepare(
        `SELECT flow_path AS flowPath, path FROM files INDEXED BY files_marked
         WHERE repo_id = ? AND deletion = 'confirmed' AND ${waitingSql}`,
      ),
      ackedHash: db
        .prepare('SELECT acked_hash FROM files WHERE repo_id = ? AND flow_path = ? AND path = ?')
        .pluck(),
    };
  }

  /** The deletions waiting now, those confirmed and those held, once the marks of files no longer waiting are dropped. */
  look(repoId: number): WaitingDeletions {
    this.statements.dropStale.run(repoId);
    return this.statements.count.get(repoId) as WaitingDeletions;
  }

  /** The guard held them: every deletion waiting that its user has not confirmed is in the held set now. */
  hold(repoId: number): void {
    this.statements.hold.run(repoId);
  }

  /**
   * Its user's word ("Delete them on the service", `sync --yes`) on the deletions waiting now, or on these files
   * only (those of them that are deletions waiting). Returns the files confirmed.
   */
  confirm(repoId: number, files?: readonly FlowFile[]): FlowFile[] {
    if (files === undefined) return this.statements.confirmAll.all(repoId) as FlowFile[];
    return this.db.transaction(() =>
      files.flatMap(
        ({ flowPath, path }) => this.statements.confirmOne.all(repoId, flowPath, path) as FlowFile[],
      ),
    )();
  }

  /** The confirmed deletions still waiting: the planner sends them while others are held. */
  confirmed(repoId: number): FlowFile[] {
    return this.statements.confirmed.all(repoId) as FlowFile[];
  }

  /** Of these files, how many the service took as deleted: no longer acknowledged here (the row gone or emptied). */
  taken(repoId: number, files: readonly FlowFile[]): number {
    return files.filter(
      ({ flowPath, path }) => (this.statements.ackedHash.get(repoId, flowPath, path) ?? null) === null,
    ).length;
  }
}
