import type Database from 'better-sqlite3';

/**
 * What a flow sent without an answer carried, file by file (`in_flight_files`; `hash` null: a deletion), kept while
 * the flow is in flight: the evidence that a version the service holds under this checkout's id is its
 * own lost acknowledgement (reconcile.ts's isOwnVersion), and not a copy of this checkout (one id) writing over it.
 * The flow itself is marked in `in_flight`; its answer (or the look that answers for it) forgets both.
 */
export class SentFiles {
  private readonly statements;

  constructor(db: Database.Database) {
    this.statements = {
      mark: db.prepare(
        `INSERT INTO in_flight_files (repo_id, flow_path, path, hash) VALUES (@repoId, @flowPath, @path, @hash)
         ON CONFLICT (repo_id, flow_path, path) DO UPDATE SET hash = excluded.hash`,
      ),
      ofFlow: db.prepare('SELECT path, hash FROM in_flight_files WHERE repo_id = ? AND flow_path = ?'),
      forget: db.prepare('DELETE FROM in_flight_files WHERE repo_id = ? AND flow_path = ?'),
    };
  }

  /** These files of a flow are being sent (call inside the transaction that marks the flow in flight). */
  mark(repoId: number, flowPath: string, sent: readonly { path: string; hash: string | null }[]): void {
    for (const { path, hash } of sent) this.statements.mark.run({ repoId, flowPath, path, hash });
  }

  /** What this checkout sent of a flow without an answer, file by file (null: a deletion). */
  of(repoId: number, flowPath: string): Map<string, string | null> {
    const rows = this.statements.ofFlow.all(repoId, flowPath) as { path: string; hash: string | null }[];
    return new Map(rows.map((row) => [row.path, row.hash]));
  }

  /** The flow was answered (or answered by a look): what it carried is no evidence any more. */
  forget(repoId: number, flowPath: string): void {
    this.statements.forget.run(repoId, flowPath);
  }
}
