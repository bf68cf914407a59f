import type Database from 'better-sqlite3';
import { FILE_SIDE_SQL, wantedOnServiceSql } from './three-way.ts';
import { LIVE_REJECTION, PENDING, SIDES } from './state-sql.ts';
import type { RepoCounts } from './state-records.ts';

/**
 * Each repository's counts (files, flows, pending, conflicts…): an aggregate over all its files, 60-120 million
 * instructions at 100,000 files, the largest part of a `flowsync status` with no agent running.
 *
 * So they are counted once for as long as nothing they read changes. The agent, the state's one writer (the agent
 * lock), remembers the counts it made with the number of rows its connection had changed then (SQLite's
 * total_changes(), less the changes to rows the counts do not read: aside), and counts again only once that moved:
 * at rest the window, the tray and each round's line read them over and over. It keeps them in the state when it
 * closes it (keep), and forgets them there when it opens it, before it changes anything, taking them as its own:
 * a restart with nothing changed counted every file again, 0.4-0.7 s of its CPU at 100,000. A reader (`status`)
 * uses what the state keeps, which is nothing while an agent has it open, else counts.
 */
export class StateCounts {
  private readonly statements;
  /** The counts last made (or found kept), by repository, with the changes() they were made at. */
  private readonly made = new Map<number, { at: number; counts: RepoCounts }>();
  /** Rows changed by writes set aside (aside): left out of changes(). */
  private setAside = 0;

  constructor(
    db: Database.Database,
    /** Opened to read (`status`): kept counts are used, and never forgotten nor written. */
    private readonly reader: boolean,
  ) {
    this.statements = {
      count: db.prepare(
        `SELECT count(DISTINCT CASE WHEN local_hash IS NOT NULL THEN flow_path END) AS flows,
           count(CASE WHEN local_hash IS NOT NULL THEN 1 END) AS files,
           -- A flow sent but not answered counts as one pending file when none of its files is pending.
           count(CASE WHEN ${PENDING} THEN 1 END)
             + (SELECT count(*) FROM in_flight i WHERE i.repo_id = @repoId AND NOT EXISTS (
                 SELECT 1 FROM files p WHERE p.repo_id = @repoId AND p.flow_path = i.flow_path
                   AND ${wantedOnServiceSql('p')} IS NOT p.acked_hash)) AS pending,
           (SELECT count(*) FROM ${SIDES} WHERE c.repo_id = @repoId AND ${FILE_SIDE_SQL} = 'conflict') AS conflicts,
           (SELECT count(*) FROM ${SIDES} WHERE c.repo_id = @repoId AND ${FILE_SIDE_SQL} = 'behind') AS behind,
           -- PENDING_FLOWS counted in this same pass over the files (a second pass was 22 of 57 ms at 100,000).
           count(DISTINCT CASE WHEN ${PENDING} THEN flow_path END)
             + (SELECT count(*) FROM in_flight i WHERE i.repo_id = @repoId AND NOT EXISTS (SELECT 1 FROM files
                 WHERE files.repo_id = @repoId AND files.flow_path = i.flow_path AND ${PENDING})) AS pendingFlows,
           count(CASE WHEN local_hash IS NOT NULL AND warning IS NOT NULL THEN 1 END) AS warnings,
           (SELECT count(*) FROM rejected_flows r WHERE r.repo_id = @repoId AND ${LIVE_REJECTION}) AS rejected
         FROM files WHERE repo_id = @repoId`,
      ),
      kept: db.prepare('SELECT counts FROM repos WHERE id = ?').pluck(),
      keep: db.prepare('UPDATE repos SET counts = ? WHERE id = ?'),
      forget: db.prepare('UPDATE repos SET counts = NULL WHERE counts IS NOT NULL'),
      repoIds: db.prepare('SELECT id FROM repos').pluck(),
      keptAll: db.prepare('SELECT id, counts FROM repos WHERE counts IS NOT NULL'),
      changes: db.prepare('SELECT total_changes()').pluck(),
    };
    if (reader) return;
    const kept = this.statements.keptAll.all() as { id: number; counts: string }[];
    this.statements.forget.run();
    const at = this.changes();
    for (const { id, counts } of kept) this.made.set(id, { at, counts: JSON.parse(counts) as RepoCounts });
  }

  /** The repository's counts: those kept (for a reader), or those made since the last change, else counted now. */
  of(repoId: number): RepoCounts {
    if (this.reader) {
      const kept = this.statements.kept.get(repoId) as string | null | undefined;
      return kept ? (JSON.parse(kept) as RepoCounts) : this.count(repoId);
    }
    const at = this.changes();
    const made = this.made.get(repoId);
    if (made?.at === at) return { ...made.counts };
    const counts = this.count(repoId);
    this.made.set(repoId, { at, counts });
    return { ...counts };
  }

  private count(repoId: number): RepoCounts {
    return this.statements.count.get({ repoId }) as RepoCounts;
  }

  /** Rows this connection changed since it opened, but for those set aside. */
  private changes(): number {
    return (this.statements.changes.get() as number) - this.setAside;
  }

  /**
   * Runs a write of rows the counts do not read (the repos table's dates and flags, the sources table), its changes
   * set aside: a restart writes some of those whatever happened, and would make the found counts stale for nothing.
   * Never for a write that reaches the files (a repository deleted deletes them).
   */
  aside<T>(write: () => T): T {
    const before = this.statements.changes.get() as number;
    try {
      return write();
    } finally {
      this.setAside += (this.statements.changes.get() as number) - before;
    }
  }

  /** Keeps every repository's counts as they are now: the last thing an agent does with the state. */
  keep(): void {
    if (this.reader) return;
    for (const repoId of this.statements.repoIds.all() as number[])
      this.statements.keep.run(JSON.stringify(this.of(repoId)), repoId);
  }
}
