import Database from 'better-sqlite3';
import { dirname } from 'node:path';
import { ensurePrivateFile } from '../host/index.ts';
import { FILE_SIDE_SQL } from './three-way.ts';
import { migrateState } from './state-schema.ts';
import {
  FILE_COLUMNS,
  GONE,
  LIVE_REJECTION,
  PENDING,
  PENDING_FLOWS,
  SIDE_IS,
  SIDES,
  WAITING_DELETION,
} from './state-sql.ts';
import { checkoutIdsFile, keptCheckoutId } from './checkout-ids.ts';
import { ChangedFlows } from './state-changed-flows.ts';
import { outermostFolders } from './outermost.ts';
import { SentFiles } from './state-sent.ts';
import { StatCache } from './state-stats.ts';
import { DeletionMarks } from './state-deletions.ts';
import { GitHeldMarks } from './state-motions.ts';
import { PresenceMarks } from './state-presence.ts';
import { StateCounts } from './state-counts.ts';
import { AcknowledgedAggregates } from './state-aggregates.ts';
import type {
  FileConflict,
  FileRecord,
  FileState,
  FlowAck,
  RepoCounts,
  RepoRecord,
} from './state-records.ts';

/**
 * The agent's memory, one SQLite file (WAL) for all repositories. For each file it keeps what is on disk (size,
 * mtime, ctime, inode and hash: the cache that spares re-reading unchanged files) and what the service has
 * acknowledged. The difference is the outbox: whatever differs is pending, so a crash, a kill or a dead network
 * loses nothing; a restart rescans and sends exactly what differs. What was sent but not answered is a state of
 * its own (`in_flight`), so a lost answer cannot leave on the service a file that the agent forgot.
 */
export class SyncState {
  readonly db: Database.Database;
  /** The deletions that wait for their user: held in a set, or confirmed until sent. */
  readonly deletions: DeletionMarks;
  /** Each file's stat and hash as last read (state-stats.ts): what spares hashing an unchanged file. */
  readonly stats: StatCache;
  /** What each flow in flight carried (state-sent.ts): the evidence of a lost acknowledgement. */
  readonly sent: SentFiles;
  /** Git's motions held for their user, and whether others write to the repository. */
  readonly gitHeld: GitHeldMarks;
  /** The flows whose files appeared on disk or went from it since the look at the service compared them. */
  readonly presence: PresenceMarks;
  private readonly statements;
  /** Where the checkouts' ids are kept beside the state (see checkout-ids.ts). */
  private readonly idsFile: string | null;
  /** Flows whose acknowledged versions changed since the look at the service compared them (state-changed-flows.ts). */
  readonly ackedChanged = new ChangedFlows();

  /** Each repository's counts, kept by the agent that last wrote the state (state-counts.ts). */
  private readonly counted: StateCounts;
  /** Each flow's aggregate of what was acknowledged, kept in the state (state-aggregates.ts). */
  private readonly aggregates: AcknowledgedAggregates;

  /** `reader`: opened to read what the agent left (`status`), which uses the counts it kept. */
  constructor(path: string, { reader = false }: { reader?: boolean } = {}) {
    this.idsFile = checkoutIdsFile(path);
    if (path !== ':memory:') ensurePrivateFile(path);
    this.db = new Database(path);
    try {
      this.db.pragma('journal_mode = WAL');
    } catch (error) {
      // The first read: a damaged file (SQLITE_NOTADB) fails here. Closed, so that it can be moved aside (Windows).
      this.db.close();
      throw error;
    }
    this.db.pragma('synchronous = NORMAL');
    this.db.pragma('foreign_keys = ON');
    this.db.pragma('busy_timeout = 5000');
    // 2 MB of page cache instead of better-sqlite3's 16 MB: state.db is 23 MB at 100,000 files, read whole only
    // at a rescan, and then the cache stayed full all day. Reading every row added 19 MB of RSS, now 3 MB; the
    // read of 100,000 rows takes 0.23 s instead of 0.19-0.23 s (the OS keeps the file in its page cache).
    this.db.pragma('cache_size = -2000');
    migrateState(this.db);
    this.deletions = new DeletionMarks(this.db, WAITING_DELETION);
    this.sent = new SentFiles(this.db);
    this.stats = new StatCache(this.db);
    this.gitHeld = new GitHeldMarks(this.db);
    this.presence = new PresenceMarks(this.db);
    this.counted = new StateCounts(this.db, reader);
    this.aggregates = new AcknowledgedAggregates(this.db, reader, (write) => this.counted.aside(write));

    const db = this.db;
    this.statements = {
      insertRepo: db.prepare(
        `INSERT INTO repos (root, service, owner, name) VALUES (?, ?, ?, ?)
         ON CONFLICT (root, service) DO UPDATE SET owner = excluded.owner, name = excluded.name RETURNING id`,
      ),
      repos: db.prepare(
        `SELECT id, root, service, owner, name, last_sync_at AS lastSyncAt, last_error AS lastError FROM repos ORDER BY root, service`,
      ),
      setRepoResult: db.prepare(
        'UPDATE repos SET last_sync_at = coalesce(?, last_sync_at), last_error = ? WHERE id = ?',
      ),
      files: db.prepare(`SELECT ${FILE_COLUMNS} FROM files WHERE repo_id = ?`),
      hasFiles: db.prepare('SELECT 1 FROM files WHERE repo_id = ? LIMIT 1').pluck(),
      // A range of flow_path ('flows/' to 'flows0', '0' following '/'), so that the primary key answers it.
      hasAckedUnder: db
        .prepare(
          `SELECT 1 FROM files WHERE repo_id = @repoId AND flow_path > @prefix || '/' AND flow_path < @prefix || '0'
           AND acked_hash IS NOT NULL LIMIT 1`,
        )
        .pluck(),
      presentFiles: db.prepare(
        'SELECT flow_path AS flowPath, path FROM files WHERE repo_id = ? AND local_hash IS NOT NULL',
      ),
      presentBelow: db
        .prepare(
          `SELECT count(*) FROM files WHERE repo_id = @repoId AND local_hash IS NOT NULL
           AND substr(flow_path || '/' || path, 1, length(@folder) + 1) = @folder || '/'`,
        )
        .pluck(),
      fileStates: db.prepare(
        `SELECT flow_path AS flowPath, path, local_hash AS localHash, warning, acked_hash AS ackedHash,
           ${PENDING} AS pending, ${SIDE_IS('conflict')} AS conflict, ${SIDE_IS('behind')} AS behind FROM files
           WHERE repo_id = @repoId AND (@flowPath IS NULL OR flow_path = @flowPath) ORDER BY flow_path, path`,
      ),
      filesOfFlow: db.prepare(
        `SELECT ${FILE_COLUMNS} FROM files WHERE repo_id = ? AND flow_path = ? ORDER BY path`,
      ),
      saveLocal: db.prepare(
        `INSERT INTO files (repo_id, flow_path, path, size, mtime_ms, ctime_ms, ino, local_hash, warning)
         VALUES (@repoId, @flowPath, @path, @size, @mtimeMs, @ctimeMs, @ino, @localHash, @warning)
         ON CONFLICT (repo_id, flow_path, path) DO UPDATE SET size = excluded.size, mtime_ms = excluded.mtime_ms,
           ctime_ms = excluded.ctime_ms, ino = excluded.ino, local_hash = excluded.local_hash,
           warning = excluded.warning`,
      ),
      markGone: db.prepare(
        `UPDATE files SET local_hash = NULL, size = NULL, mtime_ms = NULL, warning = NULL
         WHERE repo_id = ? AND flow_path = ? AND path = ?`,
      ),
      // Below a folder, as three ranges of the primary key (flows below it, the flow it is, a folder inside a
      // flow): a test of every key of the repository (`substr(flow_path || '/' || path…)`) ran once per deleted
      // path, and 10,000 files deleted took 35 s of CPU; by ranges, the lookups cost what they find.
      markGoneFlowsBelow: db.prepare(
        `UPDATE files SET ${GONE} WHERE repo_id = @repoId AND flow_path >= @from AND flow_path < @to
           AND local_hash IS NOT NULL`,
      ),
      markGoneFlow: db.prepare(
        `UPDATE files SET ${GONE} WHERE repo_id = @repoId AND flow_path = @flowPath AND local_hash IS NOT NULL`,
      ),
      markGoneInFlow: db.prepare(
        `UPDATE files SET ${GONE} WHERE repo_id = @repoId AND flow_path = @flowPath AND path >= @from
           AND path < @to AND local_hash IS NOT NULL`,
      ),
      markUnreadable: db.prepare(
        `INSERT INTO files (repo_id, flow_path, path, size, mtime_ms, local_hash, warning)
         VALUES (@repoId, @flowPath, @path, 0, NULL, '', 'unreadable')
         ON CONFLICT (repo_id, flow_path, path) DO UPDATE SET warning = 'unreadable', mtime_ms = NULL,
           local_hash = coalesce(local_hash, '')`,
      ),
      markUnreadableUnder: db.prepare(
        `UPDATE files SET warning = 'unreadable', mtime_ms = NULL
         WHERE repo_id = @repoId AND local_hash IS NOT NULL
           AND substr(flow_path || '/' || path, 1, length(@prefix) + 1) = @prefix || '/'`,
      ),
      unreadable: db.prepare(
        `SELECT flow_path AS flowPath, path FROM files INDEXED BY files_warned
         WHERE repo_id = ? AND warning = 'unreadable' AND local_hash IS NOT NULL ORDER BY flow_path, path`,
      ),
      dropForgotten: db.prepare(
        // INDEXED BY: without statistics SQLite would walk the repository's whole primary key range instead. A
        // file of a flow sent without an answer is kept: the service may hold it, and only its row can say so
        // (answerFromListing).
        `DELETE FROM files INDEXED BY files_forgotten WHERE repo_id = @repoId AND local_hash IS NULL
           AND acked_hash IS NULL
           AND flow_path NOT IN (SELECT flow_path FROM in_flight WHERE repo_id = @repoId)`,
      ),
      pendingFlows: db.prepare(PENDING_FLOWS).pluck(),
      uncertainFlows: db.prepare('SELECT flow_path FROM in_flight WHERE repo_id = ?').pluck(),
      markSending: db.prepare(
        'INSERT INTO in_flight (repo_id, flow_path) VALUES (?, ?) ON CONFLICT (repo_id, flow_path) DO NOTHING',
      ),
      forgetSent: db.prepare('DELETE FROM in_flight WHERE repo_id = ? AND flow_path = ?'),
      // An unreadable file loses its mtime, so that the next scan reads it again rather than trust the cache.
      recordRead: db.prepare(
        `UPDATE files SET local_hash = @hash, size = @size, warning = @warning,
           mtime_ms = CASE WHEN @warning = 'unreadable' THEN NULL ELSE mtime_ms END
         WHERE repo_id = @repoId AND flow_path = @flowPath AND path = @path AND local_hash IS @expected`,
      ),
      recordGone: db.prepare(
        `UPDATE files SET local_hash = NULL, size = NULL, mtime_ms = NULL, warning = NULL
         WHERE repo_id = @repoId AND flow_path = @flowPath AND path = @path AND local_hash IS @expected`,
      ),
      ackStored: db.prepare(
        `UPDATE files SET acked_hash = @hash, file_id = coalesce(@fileId, file_id)
         WHERE repo_id = @repoId AND flow_path = @flowPath AND path = @path`,
      ),
      ackDropped: db.prepare(
        'UPDATE files SET acked_hash = NULL, file_id = NULL WHERE repo_id = ? AND flow_path = ? AND path = ?',
      ),
      warnings: db.prepare(
        `SELECT flow_path AS flowPath, path, warning FROM files INDEXED BY files_warned
         WHERE repo_id = ? AND local_hash IS NOT NULL AND warning IS NOT NULL ORDER BY flow_path, path`,
      ),
      reject: db.prepare(
        `INSERT INTO rejected_flows (repo_id, flow_path, message, signature) VALUES (?, ?, ?, ?)
         ON CONFLICT (repo_id, flow_path) DO UPDATE SET message = excluded.message, signature = excluded.signature`,
      ),
      clearRejection: db.prepare('DELETE FROM rejected_flows WHERE repo_id = ? AND flow_path = ?'),
      rejections: db.prepare(
        `SELECT flow_path AS flowPath, message, signature FROM rejected_flows r
         WHERE repo_id = ? AND ${LIVE_REJECTION} ORDER BY flow_path`,
      ),
      forgetGoneRejections: db.prepare(
        `DELETE FROM rejected_flows AS r WHERE repo_id = ? AND NOT ${LIVE_REJECTION}`,
      ),
      addConflict: db.prepare(
        `INSERT INTO conflicts (repo_id, flow_path, path, base_hash, service_hash, sent_hash, written_by, written_at,
           found_at, lost, raised)
         VALUES (@repoId, @flowPath, @path, @baseHash, @serviceHash, @sentHash, @writtenBy, @writtenAt, @foundAt, @lost,
           @raised)
         ON CONFLICT (repo_id, flow_path, path) DO UPDATE SET base_hash = excluded.base_hash,
           service_hash = excluded.service_hash, sent_hash = excluded.sent_hash, written_by = excluded.written_by,
           written_at = excluded.written_at, lost = excluded.lost, raised = excluded.raised`,
      ),
      // Of the files whose service version differs from their base, those changed here too (conflicts) or not
      // (behind): decided by the disk now, so a conflict its user settled on disk (a git pull) is no longer listed.
      sided: db.prepare(
        `SELECT c.flow_path AS flowPath, c.path, c.base_hash AS baseHash, c.service_hash AS serviceHash,
           c.sent_hash AS sentHash, f.local_hash AS diskHash, c.written_by AS writtenBy, c.written_at AS writtenAt,
           c.found_at AS foundAt, c.lost
         FROM ${SIDES} WHERE c.repo_id = ? AND ${FILE_SIDE_SQL} = ? ORDER BY c.flow_path, c.path`,
      ),
      conflictsOf: db.prepare(`SELECT path FROM conflicts WHERE repo_id = ? AND flow_path = ?`).pluck(),
      dropConflict: db.prepare('DELETE FROM conflicts WHERE repo_id = ? AND flow_path = ? AND path = ?'),
      // The service's version becomes the base: what is on disk is sent on it (keep mine), or is it (take theirs).
      ackService: db.prepare(
        `UPDATE files SET acked_hash = @hash, file_id = CASE WHEN @hash IS NULL THEN NULL ELSE file_id END
         WHERE repo_id = @repoId AND flow_path = @flowPath AND path = @path`,
      ),
      // Settled on disk: its user made the file what the service has (or removed it where the service has none).
      settledOnDisk: db.prepare(
        `SELECT c.flow_path AS flowPath, c.path, c.service_hash AS serviceHash FROM ${SIDES}
         WHERE c.repo_id = ? AND ${FILE_SIDE_SQL} IN ('in sync', 'yours to send')`,
      ),
      conflictCount: db
        .prepare(`SELECT count(*) FROM ${SIDES} WHERE c.repo_id = ? AND ${FILE_SIDE_SQL} = 'conflict'`)
        .pluck(),
      // Deletions a round would send: files gone from disk that the service has (three-way.ts's isDeletion).
      deletionCount: db
        .prepare(
          // Asked before every round that has something to send: by the partial index it costs what it finds, 0.03 ms
          // with 50 deletions among 100,000 files, against 15 ms for a count over every row at each burst of edits.
          `SELECT count(*) FROM files INDEXED BY files_deletions WHERE repo_id = ? AND ${WAITING_DELETION}`,
        )
        .pluck(),
      // The same files, named: held, sent, or put back on disk ("restore them on disk").
      goneAcknowledged: db.prepare(
        `SELECT flow_path AS flowPath, path, acked_hash AS ackedHash FROM files
         WHERE repo_id = ? AND ${WAITING_DELETION} ORDER BY flow_path, path`,
      ),
      adopt: db.prepare(
        `UPDATE files SET acked_hash = @hash, file_id = @id
         WHERE repo_id = @repoId AND flow_path = @flowPath AND path = @path AND acked_hash IS NULL`,
      ),
      // A file of the service this checkout never had, taken as acknowledged: gone here (a deletion to send), or
      // just written here from the service's copy. Never over a row with a base, or with other content on disk.
      adoptServiceFile: db.prepare(
        `INSERT INTO files (repo_id, flow_path, path, acked_hash, file_id) VALUES (@repoId, @flowPath, @path, @hash, @id)
         ON CONFLICT (repo_id, flow_path, path) DO UPDATE SET acked_hash = excluded.acked_hash, file_id = excluded.file_id
           WHERE files.acked_hash IS NULL AND (files.local_hash IS NULL OR files.local_hash = excluded.acked_hash)`,
      ),
      sourceOf: db.prepare('SELECT root FROM sources WHERE service = ? AND owner = ? AND name = ?').pluck(),
      claimSource: db.prepare(
        `INSERT INTO sources (service, owner, name, root) VALUES (?, ?, ?, ?)
         ON CONFLICT (service, owner, name) DO UPDATE SET root = excluded.root`,
      ),
      releaseSource: db.prepare('DELETE FROM sources WHERE service = ? AND root = ?'),
      forgetRepo: db.prepare('DELETE FROM repos WHERE root = ? AND service = ?'),
      bases: db.prepare('SELECT bases FROM repos WHERE id = ?').pluck(),
      setBases: db.prepare('UPDATE repos SET bases = 1 WHERE id = ?'),
      // 0: its service answered that it is one of the spec alone; a later 'takes bases' (1) wins over it.
      setSpecAlone: db.prepare('UPDATE repos SET bases = 0 WHERE id = ? AND bases IS NULL'),
      acknowledgedCount: db
        .prepare('SELECT count(*) FROM files WHERE repo_id = ? AND acked_hash IS NOT NULL')
        .pluck(),
      hasAcknowledged: db
        .prepare('SELECT EXISTS (SELECT 1 FROM files WHERE repo_id = ? AND acked_hash IS NOT NULL)')
        .pluck(),
      checkoutId: db.prepare('SELECT checkout_id FROM repos WHERE id = ?').pluck(),
      repoKey: db.prepare('SELECT root, service FROM repos WHERE id = ?'),
      setCheckoutId: db.prepare('UPDATE repos SET checkout_id = ? WHERE id = ? AND checkout_id IS NULL'),
    };
  }

  /**
   * Registers a repository as synced with one service and returns its id. What one service acknowledged says
   * nothing of another, so each pair has its own outbox. (The agent never renames a repository here: a name that
   * changed is synced from a fresh outbox once its user confirms, see forgetRepo.)
   */
  ensureRepo(root: string, service: string, owner: string, name: string): number {
    return this.counted.aside(
      () => this.statements.insertRepo.get(root, service, owner, name) as { id: number },
    ).id;
  }

  /**
   * This checkout's own id with this service: made at random the first time it is asked, then kept. The service's
   * history names a writer by it (beside a label for people), so two checkouts that share user, host name and
   * folder (machines made from one image, containers) never take each other's versions for their own.
   * Kept beside the state too, so that a state rebuilt after damage is still this checkout.
   */
  checkoutId(repoId: number): string {
    const kept = this.statements.checkoutId.get(repoId) as string | null | undefined;
    if (kept) return kept;
    const { root, service } = this.statements.repoKey.get(repoId) as { root: string; service: string };
    this.statements.setCheckoutId.run(keptCheckoutId(this.idsFile, `${service} ${root}`), repoId);
    return this.statements.checkoutId.get(repoId) as string;
  }

  repos(): RepoRecord[] {
    return this.statements.repos.all() as RepoRecord[];
  }

  recordSyncResult(repoId: number, error: string | null): void {
    this.counted.aside(() =>
      this.statements.setRepoResult.run(error === null ? new Date().toISOString() : null, error, repoId),
    );
  }

  files(repoId: number): FileRecord[] {
    return this.statements.files.all(repoId) as FileRecord[];
  }

  /** Whether the state knows any file of this repository (it was synced before). */
  hasFiles(repoId: number): boolean {
    return this.statements.hasFiles.get(repoId) !== undefined;
  }

  /** Whether the service acknowledged any file below a folder (a flow root, relative to the repository). */
  hasAcknowledgedUnder(repoId: number, folder: string): boolean {
    return this.statements.hasAckedUnder.get({ repoId, prefix: folder }) !== undefined;
  }

  /**
   * How many files the state has on disk below these folders (each `flowPath/path` starting with one of them and a
   * slash): a rescan that saw as many of them needs not look for the ones it did not see.
   */
  presentCountBelow(repoId: number, folders: readonly string[]): number {
    // A folder below another one of the list is counted with it, not twice.
    let count = 0;
    for (const folder of outermostFolders(folders))
      count += this.statements.presentBelow.get({ repoId, folder }) as number;
    return count;
  }

  /** Files the state has on disk, one row at a time: a rescan compares them with what it saw without loading all. */
  presentFiles(repoId: number): IterableIterator<{ flowPath: string; path: string }> {
    return this.statements.presentFiles.iterate(repoId) as IterableIterator<{
      flowPath: string;
      path: string;
    }>;
  }

  /**
   * Each file of a repository (or of one flow) with whether it is pending, by the one rule (PENDING) that the
   * counts use too: what the window lists agrees with what it counts.
   */
  fileStates(repoId: number, flowPath: string | null = null): FileState[] {
    const rows = this.statements.fileStates.all({ repoId, flowPath }) as (Omit<
      FileState,
      'pending' | 'conflict' | 'behind'
    > & { pending: number; conflict: number; behind: number })[];
    return rows.map((row) => ({
      ...row,
      pending: row.pending === 1,
      conflict: row.conflict === 1,
      behind: row.behind === 1,
    }));
  }

  filesOfFlow(repoId: number, flowPath: string): FileRecord[] {
    return this.statements.filesOfFlow.all(repoId, flowPath) as FileRecord[];
  }

  /** Records files as found on disk, in one transaction. */
  saveLocal(
    repoId: number,
    files: {
      flowPath: string;
      path: string;
      size: number;
      mtimeMs: number;
      ctimeMs?: number;
      ino?: number;
      localHash: string;
      warning: string | null;
    }[],
  ): void {
    this.db.transaction(() => {
      // Without ctime and inode (a test's record), the cache never trusts the row: the file is read again.
      for (const file of files) this.statements.saveLocal.run({ repoId, ctimeMs: null, ino: null, ...file });
    })();
  }

  /**
   * Files gone from disk: pending deletes when the service acknowledged them, forgotten otherwise. A file that
   * was sent but never acknowledged may be on the service all the same: its flow is in `in_flight`, so it is
   * sent next as a full listing, which deletes it there.
   */
  markGone(repoId: number, files: { flowPath: string; path: string }[]): void {
    if (files.length === 0) return;
    this.db.transaction(() => {
      for (const file of files) this.statements.markGone.run(repoId, file.flowPath, file.path);
      this.statements.dropForgotten.run({ repoId });
    })();
  }

  /** Everything below a folder (relative to the repository) is gone. */
  markGoneUnder(repoId: number, folder: string): void {
    const { markGoneFlowsBelow, markGoneFlow, markGoneInFlow, dropForgotten } = this.statements;
    this.db.transaction(() => {
      // In binary order the keys that start with `folder/` are those from `folder/` up to `folder0` ('0' follows '/').
      markGoneFlowsBelow.run({ repoId, from: `${folder}/`, to: `${folder}0` });
      markGoneFlow.run({ repoId, flowPath: folder });
      // The folder inside a flow: each of its parent folders may be the flow (flow roots may be nested).
      for (let slash = folder.indexOf('/'); slash > 0; slash = folder.indexOf('/', slash + 1)) {
        const inside = folder.slice(slash + 1);
        markGoneInFlow.run({
          repoId,
          flowPath: folder.slice(0, slash),
          from: `${inside}/`,
          to: `${inside}0`,
        });
      }
      dropForgotten.run({ repoId });
    })();
  }

  /**
   * Files that could not be read now (EACCES, EMFILE, EIO…), or every known file below a folder that could not be
   * listed: not gone. What the service acknowledged of them stands (not pending, not deleted, not in a full
   * listing) until they are read again; each is a warning meanwhile.
   */
  markUnreadable(
    repoId: number,
    files: readonly { flowPath: string; path: string }[],
    below: readonly string[] = [],
  ): void {
    if (files.length === 0 && below.length === 0) return;
    this.db.transaction(() => {
      for (const file of files) this.statements.markUnreadable.run({ repoId, ...file });
      for (const prefix of below) this.statements.markUnreadableUnder.run({ repoId, prefix });
    })();
  }

  /** What could not be read at the last look: read again with the round's back-off. */
  unreadable(repoId: number): { flowPath: string; path: string }[] {
    return this.statements.unreadable.all(repoId) as { flowPath: string; path: string }[];
  }

  /** Flows that differ from what the service acknowledged, or whose last request was never answered. */
  pendingFlows(repoId: number): string[] {
    return this.statements.pendingFlows.all({ repoId }) as string[];
  }

  /**
   * Flows sent without an answer (the agent died, the connection dropped, a gateway timed out): the service may
   * have stored them. Such a flow is sent next as a full listing, so a file deleted meanwhile is deleted there too.
   */
  uncertainFlows(repoId: number): string[] {
    return this.statements.uncertainFlows.all(repoId) as string[];
  }

  /** Written before a request leaves, so that a crash before the answer leaves a trace. */
  markSending(
    repoId: number,
    flows: readonly { flowPath: string; sent?: readonly { path: string; hash: string | null }[] }[],
  ): void {
    this.db.transaction(() => {
      for (const { flowPath, sent } of flows) {
        this.statements.markSending.run(repoId, flowPath);
        this.sent.mark(repoId, flowPath, sent ?? []);
      }
    })();
  }

  /** The service answered for these flows and nothing of them is unknown any more (it refused them, say). */
  forgetSent(repoId: number, flowPaths: readonly string[]): void {
    this.db.transaction(() => {
      for (const flowPath of flowPaths) {
        this.statements.forgetSent.run(repoId, flowPath);
        this.sent.forget(repoId, flowPath);
      }
      this.statements.dropForgotten.run({ repoId });
    })();
  }

  /**
   * A flow sent without an answer, answered by what the service lists of it now: the versions reconcile.ts's plan
   * adopts (what is on disk, or this checkout's own: a version sent, then changed or deleted here before the
   * answer) are acknowledged, with their ids, so what is on disk goes on them (a deletion included). Anyone else's
   * file at that path is not this checkout's to delete. The flow is answered then, and what it kept for this is
   * forgotten.
   */
  answerFromListing(
    repoId: number,
    flowPath: string,
    adopted: readonly { path: string; hash: string; id?: string }[],
  ): void {
    this.db.transaction(() => {
      for (const { path, hash, id } of adopted)
        this.statements.ackStored.run({ repoId, flowPath, path, hash, fileId: id ?? null });
      if (adopted.length > 0) this.ackedChanged.add(repoId, flowPath);
      this.forgetSent(repoId, [flowPath]);
    })();
  }

  /**
   * What the uploader read of files as it sent them becomes their local state (`read` null: gone), unless a
   * file was looked at again since it was planned (its local hash is no longer `expected`): state and disk
   * cannot stay apart, which would send the same flow again and again.
   */
  recordReads(
    repoId: number,
    reads: {
      flowPath: string;
      path: string;
      expected: string | null;
      read: { hash: string; size: number; warning: string | null } | null;
    }[],
  ): void {
    this.db.transaction(() => {
      for (const { flowPath, path, expected, read } of reads) {
        if (read) this.statements.recordRead.run({ repoId, flowPath, path, expected, ...read });
        else this.statements.recordGone.run({ repoId, flowPath, path, expected });
      }
      this.statements.dropForgotten.run({ repoId });
    })();
  }

  /** Stores what the service confirmed (and that those flows are answered); local changes made meanwhile stay pending. */
  acknowledge(repoId: number, acks: FlowAck[]): void {
    this.db.transaction(() => {
      for (const ack of acks) {
        this.statements.forgetSent.run(repoId, ack.flowPath);
        this.sent.forget(repoId, ack.flowPath);
        this.ackedChanged.add(repoId, ack.flowPath);
        for (const file of ack.stored) {
          this.statements.ackStored.run({
            repoId,
            flowPath: ack.flowPath,
            path: file.path,
            hash: file.hash,
            fileId: file.fileId,
          });
        }
        for (const path of ack.dropped) this.statements.ackDropped.run(repoId, ack.flowPath, path);
      }
      this.statements.dropForgotten.run({ repoId });
    })();
  }

  counts(repoId: number): RepoCounts {
    return this.counted.of(repoId);
  }

  warnings(repoId: number): { flowPath: string; path: string; warning: string }[] {
    return this.statements.warnings.all(repoId) as { flowPath: string; path: string; warning: string }[];
  }

  reject(repoId: number, flowPath: string, message: string, signature: string): void {
    this.statements.reject.run(repoId, flowPath, message, signature);
  }

  clearRejection(repoId: number, flowPath: string): void {
    this.statements.clearRejection.run(repoId, flowPath);
  }

  /** Forgets the refusals of flows gone from disk and from the service (LIVE_REJECTION): shown as none already. */
  forgetGoneRejections(repoId: number): void {
    this.statements.forgetGoneRejections.run(repoId);
  }

  /** The flows refused as they are, that still are (LIVE_REJECTION). */
  rejections(repoId: number): { flowPath: string; message: string; signature: string }[] {
    return this.statements.rejections.all(repoId) as {
      flowPath: string;
      message: string;
      signature: string;
    }[];
  }

  /** Files the service refused for a stale base: they wait for their user (keep mine, take the service's). */
  recordConflicts(repoId: number, conflicts: readonly Omit<FileConflict, 'foundAt'>[]): void {
    const foundAt = new Date().toISOString();
    this.db.transaction(() => {
      for (const conflict of conflicts)
        this.statements.addConflict.run({
          repoId,
          foundAt,
          ...conflict,
          lost: conflict.lost ? 1 : 0,
          raised: conflict.raised ? 1 : 0,
        });
    })();
  }

  /** The files changed both here and on the service since this checkout last synced them (fileSide 'conflict'). */
  conflicts(repoId: number): FileConflict[] {
    return (
      this.statements.sided.all(repoId, 'conflict') as (Omit<FileConflict, 'lost'> & { lost: number })[]
    ).map((c) => ({
      ...c,
      lost: c.lost === 1,
    }));
  }

  /** The files changed on the service only (fileSide 'behind'): "newer on the service", taken without loss. */
  behind(repoId: number): FileConflict[] {
    return (
      this.statements.sided.all(repoId, 'behind') as (Omit<FileConflict, 'lost'> & { lost: number })[]
    ).map((c) => ({
      ...c,
      lost: false,
    }));
  }

  /** The paths of a flow that are in conflict (the planner leaves them out). */
  conflictsOf(repoId: number, flowPath: string): Set<string> {
    return new Set(this.statements.conflictsOf.all(repoId, flowPath) as string[]);
  }

  /**
   * A conflict settled: the service's version (`serviceHash`, null for none) becomes what this agent acknowledged,
   * so that what is on disk is sent on top of it (keep mine), or already is it (take the service's).
   */
  settleConflict(repoId: number, flowPath: string, path: string, serviceHash: string | null): void {
    this.db.transaction(() => {
      this.statements.ackService.run({ repoId, flowPath, path, hash: serviceHash });
      this.ackedChanged.add(repoId, flowPath);
      this.statements.dropConflict.run(repoId, flowPath, path);
      this.statements.dropForgotten.run({ repoId });
    })();
  }

  /** Conflicts whose file its user made what the service has (or removed where it has none): settled, returned. */
  settleConflictsMatchingDisk(repoId: number): { flowPath: string; path: string }[] {
    const settled = this.statements.settledOnDisk.all(repoId) as {
      flowPath: string;
      path: string;
      serviceHash: string | null;
    }[];
    for (const { flowPath, path, serviceHash } of settled)
      this.settleConflict(repoId, flowPath, path, serviceHash);
    return settled.map(({ flowPath, path }) => ({ flowPath, path }));
  }

  /** How many files are in conflict (cheap: the engine's status line asks it at every change of phase). */
  conflictCount(repoId: number): number {
    return this.statements.conflictCount.get(repoId) as number;
  }

  /** How many deletions the next round would send (the held-deletion guard's measure). */
  deletionCount(repoId: number): number {
    return this.statements.deletionCount.get(repoId) as number;
  }

  /** Files gone from disk that the service has: the deletions a round would send (those held, when held). */
  goneAcknowledged(repoId: number): { flowPath: string; path: string; ackedHash: string }[] {
    return this.statements.goneAcknowledged.all(repoId) as {
      flowPath: string;
      path: string;
      ackedHash: string;
    }[];
  }

  /**
   * A state that knows nothing the service acknowledged (new, or rebuilt after damage) takes the service's versions
   * that this checkout wrote as acknowledged: its later edits of them are sent on them, not refused as conflicts.
   * Only files the state has on disk; returns how many were taken.
   */
  adoptOwnVersions(
    repoId: number,
    files: readonly { flowPath: string; path: string; hash: string; id: string }[],
  ): number {
    let adopted = 0;
    this.db.transaction(() => {
      for (const file of files) {
        adopted += this.statements.adopt.run({ repoId, ...file }).changes;
        this.ackedChanged.add(repoId, file.flowPath);
      }
    })();
    return adopted;
  }

  /**
   * Files on the service that this checkout never had, taken as what the service acknowledged (their hash the
   * base): not on disk, each is then a deletion a round sends on that base; written to disk from the service's
   * copy, each is in sync. A file this checkout has a base for, or other content of on disk now, is left as it is
   * (its round sends it by the usual rules). Returns how many were taken.
   */
  adoptServiceFiles(
    repoId: number,
    files: readonly { flowPath: string; path: string; hash: string; id: string }[],
  ): number {
    let adopted = 0;
    this.db.transaction(() => {
      for (const file of files) {
        adopted += this.statements.adoptServiceFile.run({ repoId, ...file }).changes;
        this.ackedChanged.add(repoId, file.flowPath);
      }
    })();
    return adopted;
  }

  /** The checkout a repository is synced from with this service, or null when none is yet. */
  sourceOf(service: string, owner: string, name: string): string | null {
    return (this.statements.sourceOf.get(service, owner, name) as string | undefined) ?? null;
  }

  /** This checkout is now the one the repository is synced from (the first one, or an explicit switch). */
  claimSource(service: string, owner: string, name: string, root: string): void {
    this.counted.aside(() => this.statements.claimSource.run(service, owner, name, root));
  }

  /** A checkout removed from flowsync is no longer any repository's source. */
  releaseSource(service: string, root: string): void {
    this.counted.aside(() => this.statements.releaseSource.run(service, root));
  }

  /**
   * Forgets what this checkout synced with a service (its outbox, conflicts, and its claim as a source): a rename
   * syncs it under its new name from a fresh state, which learns the service's files first. The service keeps
   * what it has.
   */
  forgetRepo(root: string, service: string): void {
    this.db.transaction(() => {
      this.statements.forgetRepo.run(root, service);
      this.counted.aside(() => this.statements.releaseSource.run(service, root));
    })();
  }

  /**
   * Each flow's aggregate of what this checkout acknowledged (these flows, null: every flow), as the service lists
   * it when it holds the same: a flow with no acknowledged file has none (state-aggregates.ts).
   */
  acknowledgedAggregates(repoId: number, flowPaths: readonly string[] | null = null): Map<string, string> {
    return this.aggregates.of(repoId, flowPaths);
  }

  /** Whether this repository's service said once that it takes bases. */
  serviceTakesBases(repoId: number): boolean {
    return this.statements.bases.get(repoId) === 1;
  }

  rememberServiceTakesBases(repoId: number): void {
    this.counted.aside(() => this.statements.setBases.run(repoId));
  }

  /** Whether this repository's service answered that it is one of the spec alone (and never that it takes bases). */
  serviceSpecAlone(repoId: number): boolean {
    return this.statements.bases.get(repoId) === 0;
  }

  /** Kept so that `flowsync status` can say what the service lacks without asking it. */
  rememberServiceSpecAlone(repoId: number): void {
    this.counted.aside(() => this.statements.setSpecAlone.run(repoId));
  }

  /** Files the service acknowledged: what a share of deletions is measured against. */
  acknowledgedCount(repoId: number): number {
    return this.statements.acknowledgedCount.get(repoId) as number;
  }

  /** Whether the service acknowledged any file of it: one row looked for, not all of them counted. */
  hasAcknowledged(repoId: number): boolean {
    return this.statements.hasAcknowledged.get(repoId) === 1;
  }

  /** The folder the state file is in: flowsync's data folder, named when it cannot be written. */
  get folder(): string {
    return dirname(this.db.name);
  }

  /** Closes the state, the counts of its repositories kept for the next reader (a failure to keep them is none). */
  close(): void {
    try {
      this.counted.keep();
    } catch {
      // A full or read-only disk: the next reader counts.
    }
    this.db.close();
  }
}
