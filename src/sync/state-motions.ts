import type Database from 'better-sqlite3';
import type { FlowFile } from './state-deletions.ts';

/**
 * A files row held as git left it: not pending, not a deletion the guard counts, not planned, while its
 * disk is what git left (`hash`, null: deleted) and its user has not said send. Over the files table (`files`).
 */
export const HELD_BY_GIT_SQL = `EXISTS (SELECT 1 FROM git_held g WHERE g.repo_id = files.repo_id
  AND g.flow_path = files.flow_path AND g.path = files.path AND g.hash IS files.local_hash
  AND g.decision <> 'confirmed')`;

/** A change set of git's as it stands: its name, how many files it changed and deleted, and its user's word. */
export interface GitChangeSet {
  name: string;
  changed: number;
  deleted: number;
  /** 'held': waits for its user; 'confirmed': sent on their word until the service took it; 'kept': kept here. */
  decision: 'held' | 'confirmed' | 'kept';
}

/** A file as git left it: its place and hash (null: git deleted it). */
export interface GitLeftFile extends FlowFile {
  hash: string | null;
  /** The change set it belongs to (`branch cleanup`). */
  name: string;
}

/** A file of a flow, as it stands on disk and with the service, for the question whether git made its change. */
export interface CandidateFile extends FlowFile {
  localHash: string | null;
}

/**
 * The change sets of git's held for their user (table git_held) and whether the service is shared (repos.shared_with).
 * A mark lasts while its file is as git left it and the service has not taken it: edited since (the person's
 * edit: sent as today), or sent, it is dropped at the next look.
 */
export class GitHeldMarks {
  private readonly statements;

  constructor(private readonly db: Database.Database) {
    this.statements = {
      dropStale: db.prepare(
        `DELETE FROM git_held AS g WHERE g.repo_id = ? AND NOT EXISTS (SELECT 1 FROM files f
           WHERE f.repo_id = g.repo_id AND f.flow_path = g.flow_path AND f.path = g.path
             AND f.local_hash IS g.hash AND f.acked_hash IS NOT g.hash)`,
      ),
      summary: db.prepare(
        `SELECT name, decision, count(CASE WHEN hash IS NOT NULL THEN 1 END) AS changed,
           count(CASE WHEN hash IS NULL THEN 1 END) AS deleted
         FROM git_held WHERE repo_id = ? GROUP BY name, decision ORDER BY count(*) DESC`,
      ),
      hold: db.prepare(
        `INSERT INTO git_held (repo_id, flow_path, path, hash, name) VALUES (@repoId, @flowPath, @path, @hash, @name)
         ON CONFLICT (repo_id, flow_path, path) DO UPDATE SET hash = excluded.hash, name = excluded.name,
           decision = 'held'`,
      ),
      decide: db.prepare(
        `UPDATE git_held SET decision = @decision WHERE repo_id = @repoId AND decision = @from
           AND (@name IS NULL OR name = @name)
         RETURNING flow_path AS flowPath, path, hash, name`,
      ),
      held: db.prepare(
        `SELECT flow_path AS flowPath, path, hash, name FROM git_held
         WHERE repo_id = ? AND decision = 'held' ORDER BY name, flow_path, path`,
      ),
      heldOf: db
        .prepare(
          `SELECT g.path FROM git_held g JOIN files f ON f.repo_id = g.repo_id AND f.flow_path = g.flow_path
             AND f.path = g.path AND f.local_hash IS g.hash
           WHERE g.repo_id = ? AND g.flow_path = ? AND g.decision <> 'confirmed'`,
        )
        .pluck(),
      // The changes waiting to be sent at or below a place: a file of a flow, a folder in it, a flow, a folder of flows.
      candidatesInFlow: db.prepare(
        `SELECT flow_path AS flowPath, path, local_hash AS localHash FROM files
         WHERE repo_id = @repoId AND flow_path = @flowPath AND (@path = '' OR path = @path
           OR (path > @path || '/' AND path < @path || '0'))
           AND local_hash IS NOT acked_hash AND warning IS NULL`,
      ),
      candidatesBelow: db.prepare(
        `SELECT flow_path AS flowPath, path, local_hash AS localHash FROM files
         WHERE repo_id = @repoId AND (flow_path = @folder OR (flow_path > @folder || '/' AND flow_path < @folder || '0'))
           AND local_hash IS NOT acked_hash AND warning IS NULL`,
      ),
      sharedWith: db.prepare('SELECT shared_with FROM repos WHERE id = ?').pluck(),
      setSharedWith: db.prepare('UPDATE repos SET shared_with = ? WHERE id = ?'),
    };
  }

  /** The change sets held, confirmed or kept, once the marks of files no longer as git left them are dropped. */
  look(repoId: number): GitChangeSet[] {
    this.statements.dropStale.run(repoId);
    return this.statements.summary.all(repoId) as GitChangeSet[];
  }

  /** These files are as git left them, in the change set `name`: held until their user says. */
  hold(repoId: number, name: string, files: readonly Omit<GitLeftFile, 'name'>[]): void {
    this.db.transaction(() => {
      for (const file of files) this.statements.hold.run({ repoId, name, ...file });
    })();
  }

  /**
   * Its user's word on the change set `name` held, or on every one (null): `confirmed` (send it to the team) or
   * `kept` (keep it here).
   */
  decide(repoId: number, decision: 'confirmed' | 'kept', name: string | null = null): GitLeftFile[] {
    return this.statements.decide.all({ repoId, decision, from: 'held', name }) as GitLeftFile[];
  }

  /** The files of the change sets held, each with its set: what the window lists under a set's name. */
  heldFiles(repoId: number): GitLeftFile[] {
    this.statements.dropStale.run(repoId);
    return this.statements.held.all(repoId) as GitLeftFile[];
  }

  /** The files of a flow held as git left them: the planner leaves them out. */
  heldOf(repoId: number, flowPath: string): Set<string> {
    return new Set(this.statements.heldOf.all(repoId, flowPath) as string[]);
  }

  /**
   * The changes waiting to be sent at or below a place (`place` located in a flow, or a folder of flows): those git
   * may have made. Only sendable files that differ from what the service acknowledged.
   */
  candidates(repoId: number, place: FlowFile | { folder: string }): CandidateFile[] {
    if ('folder' in place)
      return this.statements.candidatesBelow.all({ repoId, ...place }) as CandidateFile[];
    return this.statements.candidatesInFlow.all({ repoId, ...place }) as CandidateFile[];
  }

  /** The other writers the service named for this repository (none: nobody else writes to it, as far as seen). */
  sharedWith(repoId: number): string[] {
    const json = this.statements.sharedWith.get(repoId) as string | null | undefined;
    return json ? (JSON.parse(json) as string[]) : [];
  }

  /** Writers other than this checkout the service named: kept (a few), so that a restart knows it is shared. */
  noteWriters(repoId: number, others: readonly string[]): void {
    const known = this.sharedWith(repoId);
    const fresh = [...new Set(others)].filter((writer) => !known.includes(writer));
    if (fresh.length === 0 || known.length >= KEPT_WRITERS) return;
    this.statements.setSharedWith.run(JSON.stringify([...known, ...fresh].slice(0, KEPT_WRITERS)), repoId);
  }
}

/** Writers named in a confirm ("Ada, Carl and 3 more" needs a few; the list is not a directory of the team). */
const KEPT_WRITERS = 5;
