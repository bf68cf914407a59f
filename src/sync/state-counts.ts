import type Database from 'better-sqlite3';
import { FILE_SIDE_SQL, wantedOnServiceSql } from './three-way.ts';
import { LIVE_REJECTION, PENDING, SIDES } from './state-sql.ts';
import type { RepoCounts } from './state-records.ts';

/**
 * Each repository's counts (files, flows, pending, conflicts…): an aggregate over all its files, 60-120 million
 * instructions at 100,000 files, the largest part of a `flowsync status` with no agent running (issue 50).
 *
 * So the state also keeps them, as the agent last left them: an agent that stops cleanly writes each repository's
 * counts (keep), and an agent that opens the state forgets them first, before it changes anything. Only one agent
 * writes the state at a time (the agent lock), so counts found kept are those of the files as they are: nothing
 * wrote since. A reader (`status`) uses them, else counts; an agent always counts, since it changes the files.
 */
export class StateCounts {
  private readonly statements;

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
    };
    if (!reader) this.statements.forget.run();
  }

  /** The repository's counts: those kept, for a reader, else counted now. */
  of(repoId: number): RepoCounts {
    const kept = this.reader ? (this.statements.kept.get(repoId) as string | null | undefined) : null;
    if (kept) return JSON.parse(kept) as RepoCounts;
    return this.statements.count.get({ repoId }) as RepoCounts;
  }

  /** Keeps every repository's counts as they are now: the last thing an agent does with the state. */
  keep(): void {
    if (this.reader) return;
    for (const repoId of this.statements.repoIds.all() as number[])
      this.statements.keep.run(JSON.stringify(this.of(repoId)), repoId);
  }
}
