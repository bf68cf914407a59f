import type Database from 'better-sqlite3';
import { createHash } from 'node:crypto';
import { flowHashInput } from '../protocol/index.ts';

/** A character above U+FFFF (a surrogate pair in JavaScript's strings). */
const ABOVE_BMP = /[\u{10000}-\u{10FFFF}]/u;

/**
 * The triggers that keep `acked_aggregates` true (state-schema.ts adds them with the table): every flow with an
 * acknowledged file has a row, and a row's hash is forgotten (NULL) whenever an acknowledged file of its flow is
 * added, changed, renamed or removed, by whatever statement does it. A stale aggregate that equals the service's
 * would hide a teammate's edit, so no writer is trusted to remember: the database does it.
 *
 * Each mark is one statement (one lookup), and a row fires one mark unless it moved to another flow: a first pass
 * acknowledges 100,000 files, and two statements per mark (an update, then an insert where none was) cost 190 ms of
 * its main thread against 95 ms for this (1,000 flows of 100 files acknowledged, in memory). A flow an acknowledged
 * file enters is marked by an upsert, whose DO UPDATE is not overridden by the conflict clause of the statement that
 * fired the trigger (UPDATE OR IGNORE: the test's renames), as a trigger's own OR IGNORE would be. A flow one leaves
 * has its row (it had an acknowledged file) and is marked by an update alone: an insert there, when a repository is
 * forgotten, named the repository being deleted (FOREIGN KEY constraint failed, and every rename failed with it).
 */
const markEntered = (when: string) => `
  INSERT INTO acked_aggregates (repo_id, flow_path) SELECT new.repo_id, new.flow_path WHERE ${when}
    ON CONFLICT DO UPDATE SET hash = NULL WHERE hash IS NOT NULL;`;
const markLeft = `
  UPDATE acked_aggregates SET hash = NULL
    WHERE old.acked_hash IS NOT NULL AND repo_id = old.repo_id AND flow_path = old.flow_path AND hash IS NOT NULL;`;
const movedFlow = 'new.flow_path IS NOT old.flow_path OR new.repo_id IS NOT old.repo_id';

export const ACKED_AGGREGATES_SCHEMA = `
  CREATE TABLE acked_aggregates (
    repo_id INTEGER NOT NULL REFERENCES repos (id) ON DELETE CASCADE,
    flow_path TEXT NOT NULL,
    hash TEXT,
    PRIMARY KEY (repo_id, flow_path)
  ) WITHOUT ROWID;
  INSERT INTO acked_aggregates (repo_id, flow_path)
    SELECT DISTINCT repo_id, flow_path FROM files WHERE acked_hash IS NOT NULL;
  CREATE TRIGGER acked_aggregates_insert AFTER INSERT ON files WHEN new.acked_hash IS NOT NULL
    BEGIN ${markEntered('true')} END;
  CREATE TRIGGER acked_aggregates_update AFTER UPDATE OF repo_id, flow_path, path, acked_hash ON files
    WHEN old.acked_hash IS NOT new.acked_hash OR old.path IS NOT new.path OR ${movedFlow}
    BEGIN
      ${markLeft}
      ${markEntered(`new.acked_hash IS NOT NULL AND (old.acked_hash IS NULL OR ${movedFlow})`)}
    END;
  CREATE TRIGGER acked_aggregates_delete AFTER DELETE ON files WHEN old.acked_hash IS NOT NULL
    BEGIN ${markLeft} END;`;

/**
 * Each flow's aggregate of what this checkout acknowledged: the SHA-256 of flowHashInput of its acknowledged files,
 * which is what the service lists for the flow when it holds what this checkout acknowledged. The look at the
 * service compares them with its `list_flows` answer. Made from the files once, then kept in the state until one
 * of the flow's acknowledged files changes (the triggers above): at 100,000 files, making every flow's at each look
 * was 150 ms of a `flowsync status`'s 730 ms of CPU (the files read, put together and hashed).
 */
export class AcknowledgedAggregates {
  private readonly statements;

  constructor(
    db: Database.Database,
    /** Opened to read (`status`): aggregates found forgotten are made, never kept. */
    private readonly reader: boolean,
    /** Writes the counts do not read (StateCounts.aside). */
    private readonly aside: <T>(write: () => T) => T,
  ) {
    this.statements = {
      all: db.prepare('SELECT flow_path, hash FROM acked_aggregates WHERE repo_id = ?').raw(),
      one: db.prepare('SELECT hash FROM acked_aggregates WHERE repo_id = ? AND flow_path = ?').raw(),
      // flowHashInput's lines made by SQLite: one string per flow, not an object per file (100,000 files read as
      // rows took 0.5 s of `flowsync status`'s CPU, as one string per flow 0.07 s).
      input: db
        .prepare(
          `SELECT group_concat(path || char(0) || acked_hash || char(10), '' ORDER BY path) FROM files
           WHERE repo_id = ? AND flow_path = ? AND acked_hash IS NOT NULL`,
        )
        .pluck(),
      acked: db.prepare(
        `SELECT path, acked_hash AS hash FROM files WHERE repo_id = ? AND flow_path = ? AND acked_hash IS NOT NULL`,
      ),
      keep: db.prepare('UPDATE acked_aggregates SET hash = ? WHERE repo_id = ? AND flow_path = ?'),
      drop: db.prepare('DELETE FROM acked_aggregates WHERE repo_id = ? AND flow_path = ?'),
    };
  }

  /**
   * The aggregates of these flows (null: every flow), by flow; a flow with no acknowledged file has none. Those
   * forgotten are made now and kept (a writer's connection).
   */
  of(repoId: number, flowPaths: readonly string[] | null): Map<string, string> {
    const found: [string, string | null][] =
      flowPaths === null
        ? (this.statements.all.all(repoId) as [string, string | null][])
        : flowPaths.flatMap((flowPath) => {
            const row = this.statements.one.get(repoId, flowPath) as [string | null] | undefined;
            return row === undefined ? [] : [[flowPath, row[0]] as [string, string | null]];
          });
    const aggregates = new Map<string, string>();
    for (const [flowPath, hash] of found) {
      const made = hash ?? this.make(repoId, flowPath);
      if (made !== null) aggregates.set(flowPath, made);
    }
    return aggregates;
  }

  /** Makes a flow's aggregate from its files, and keeps it (null, and its row dropped: none is acknowledged). */
  private make(repoId: number, flowPath: string): string | null {
    const input = this.input(repoId, flowPath);
    const hash = input === null ? null : createHash('sha256').update(input).digest('hex');
    if (!this.reader)
      this.aside(() =>
        hash === null
          ? this.statements.drop.run(repoId, flowPath)
          : this.statements.keep.run(hash, repoId, flowPath),
      );
    return hash;
  }

  /**
   * A flow's acknowledged files as flowHashInput puts them (`path NUL hash` lines in order). SQLite orders paths
   * by their UTF-8 bytes, flowHashInput by UTF-16 code units: the two differ only where a character above U+FFFF
   * meets one from U+E000 up, so a flow with any above U+FFFF is put in flowHashInput's own order.
   */
  input(repoId: number, flowPath: string): string | null {
    const input = this.statements.input.get(repoId, flowPath) as string | null;
    if (input === null || !ABOVE_BMP.test(input)) return input;
    return flowHashInput(this.statements.acked.all(repoId, flowPath) as { path: string; hash: string }[]);
  }
}
