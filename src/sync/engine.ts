import { EventEmitter } from 'node:events';
import { existsSync, lstatSync } from 'node:fs';
import { join } from 'node:path';
import {
  askCapabilities,
  checkAccess,
  failureKind,
  ProtocolError,
  type RemoteClient,
} from '../client/index.ts';
import {
  describeStorageFault,
  folderFault,
  storageFaultOf,
  storageFaultRemedy,
  type StorageFault,
} from '../host/index.ts';
import { flowHashInput, folderGone, type FileVersion } from '../protocol/index.ts';
import { createHash } from 'node:crypto';
import { recordConflicts } from './conflicts.ts';
import { Coalescer } from './coalescer.ts';
import { FlowLayout } from './flow-layout.ts';
import { FlowRetries } from './flow-retries.ts';
import type { Hasher } from './hasher.ts';
import { IgnoreRules } from './ignore-rules.ts';
import { planUploads, plansKey, type FlowPlan } from './planner.ts';
import { PresenceCheck, nothingToSync } from './presence.ts';
import { Reconciler } from './reconciler.ts';
import { RootGuard } from './root-guard.ts';
import { NotWritten, replaceContained } from './contained-write.ts';
import { notRealFolder } from './contained-fs.mjs';
import {
  conflictSides,
  fileVersions,
  sideDiff,
  versionText,
  versionToShow,
  type SideDiff,
} from './file-history.ts';
import {
  listServiceFiles,
  readServiceFiles,
  type ServiceRepository,
  serviceFileKey,
  type ListedServiceFile,
} from './service-copy.ts';
import { checkServiceFile } from './service-answers.ts';
import { DEFAULT_DELETION_GUARD, deletionVerdict, type DeletionGuard, type DeletionsSeen } from './safety.ts';
import { DEFAULT_TIMINGS, Scheduler, type RoundOutcome } from './scheduler.ts';
import type { FileConflict, RepoCounts, SyncState } from './state.ts';
import { uploadPlans, type FileChange, type UploadTally } from './uploader.ts';
import type { FolderWatchBudget } from './watch-budget.ts';
import { FlowWatcher } from './watcher.ts';

/** A conflict as two diffs from the version last synced here (engine.compare). */
export interface ConflictComparison {
  toService: SideDiff;
  toDisk: SideDiff;
}

export interface RepositorySpec {
  root: string;
  owner: string;
  name: string;
  /** Folders (relative to the root) whose subfolders are flows; default `flows`. */
  flowRoots: readonly string[];
  /** Who writes, as the service's history names this checkout (`dev@laptop:~/code/app`). */
  writer?: string;
  /** When a round's deletions are held for its user (default DEFAULT_DELETION_GUARD); null: never. */
  deletionGuard?: DeletionGuard | null;
}

/**
 * A service that said it takes no bases is asked again after this long: the answer may have been a passing one (a
 * flowsync service's 500 while it starts), and a service can be upgraded in place.
 */
const SPEC_ONLY_RECHECK_MS = 60_000;

/**
 * `storage`: the state could not be written (the data folder full, read-only…); changes wait in memory meanwhile.
 * `paused`: its user paused the repository; changes are still watched and counted as pending, and nothing is sent.
 */
export type SyncPhase =
  'scanning' | 'syncing' | 'idle' | 'offline' | 'unauthorized' | 'missing' | 'storage' | 'stopped' | 'paused';

export interface SyncStatus {
  phase: SyncPhase;
  counts: RepoCounts;
  /** Why the engine is offline, unauthorized, missing or cannot write its state; null otherwise. */
  message: string | null;
  /** When the next attempt is due, while offline (or backing off). */
  retryAt: number | null;
  /** Files the rescans found changed, new or gone that the watcher had not reported, since the engine started. */
  missed: number;
  /** Deletions waiting for their user to say delete them (or restore them on disk); 0 when none is held. */
  heldDeletions: number;
  /** Files the service holds that this checkout never had, from the last check of the service (0: none, or unknown). */
  notInCheckout: number;
  /** Whether its user paused the repository (whatever the phase says meanwhile: a scan, the folder missing). */
  paused: boolean;
  /** Since when it is paused (ISO time); null when not paused, or paused by an older flowsync that did not say. */
  pausedSince: string | null;
  /** The line that says none of its flow folders is there (nothing to sync, and where to fix it); else null. */
  nothingToSync: string | null;
}

/** A rescan that found what the watcher missed: "rescan found 3 files the watcher missed (periodic)". */
export interface SyncMiss {
  files: number;
  /** What asked for the rescan: `periodic`, `new folder`, `flows came back`, `watcher error`. */
  reason: string;
}

export interface SyncProgress {
  stage: 'hashing' | 'uploading';
  done: number;
  total: number;
}

/** One round of uploads, for the line `flowsync start` prints. */
export interface SyncReport {
  /** The files whose change the service acknowledged in this round, by name, sorted. */
  files: FileChange[];
  /** Files the service refused in this round for a stale base: each is a conflict now. */
  conflicts: { flowPath: string; path: string; writtenBy: string | null }[];
  flows: number;
  created: number;
  updated: number;
  deleted: number;
  rejected: { flowPath: string; message: string }[];
  requests: number;
  ms: number;
}

/**
 * One flow of a dry run: what a round would send of it (`send`), or why it would send nothing: the service refused
 * it as it is; or a flow root (`flowPath` is then the root) is held: absent, emptied, on another drive.
 */
export interface PlannedFlow {
  flowPath: string;
  action: 'send' | 'held' | 'refused' | 'conflict';
  /** Why a root is held, in words. */
  message: string | null;
  created: string[];
  updated: string[];
  deleted: string[];
}

/** In sync again after an outage (offline, unauthorized, or the folder missing): "Back in sync: N files sent". */
export interface SyncRecovery {
  /** Files the service created, updated or deleted from the end of the outage until in sync. */
  files: number;
}

export interface SyncEngineOptions {
  repo: RepositorySpec;
  client: RemoteClient;
  state: SyncState;
  hasher: Hasher;
  /** Names the service the acknowledged state is for (its URL, or `embedded`). */
  serviceKey: string;
  quietMs?: number;
  maxWaitMs?: number;
  /** Back-off after an answer that says "not now" (5xx, 429, 401): doubled per failure, at most `retryMaxMs`. */
  retryBaseMs?: number;
  retryMaxMs?: number;
  /** While the service does not answer, a cheap probe every `probeMinMs`–`probeMaxMs` (default 2–4 s). */
  probeMinMs?: number;
  probeMaxMs?: number;
  /** How often to look for flow roots that appeared and for the repository folder itself. */
  presenceIntervalMs?: number;
  /**
   * How often every flow root is rescanned whatever the watcher said, ±20 % (default RESCAN_INTERVAL_MS); what a
   * rescan finds is sent and counted in `missed`.
   */
  rescanIntervalMs?: number;
  /** Starts paused (a repository its user paused before a restart): see pause(). */
  paused?: { since: string | null };
  /** The folders watched, shared with the other engines of the process (default: the process's own). */
  watchBudget?: FolderWatchBudget;
}

interface EngineEvents {
  status: [SyncStatus];
  progress: [SyncProgress];
  synced: [SyncReport];
  recovered: [SyncRecovery];
  missed: [SyncMiss];
  /** A periodic rescan ended: the owner of the engine looks again at what a rescan does not (the git remote). */
  rescanned: [];
}

/**
 * Every repository is rescanned whole this often (±20 %), as Syncthing does hourly: the watcher is a hint, the
 * rescan the truth. 100,000 unchanged files cost 2.3 s of CPU, 88 MiB read(2) from the page cache (the state's
 * pages; no file is read) and no request; 10,000 files 0.33 s (bench/sync.ts, 2 shared cores at load 12 to 17). Every
 * 10 minutes is 0.4 % of one core at 100,000 files, and a miss is sent within 12 minutes at worst.
 */
export const RESCAN_INTERVAL_MS = 10 * 60_000;

/** Pending flows planned and sent at a time: two requests of up to 200 flows each (MAX_FLOWS_PER_BATCH). */
const UPLOAD_PAGE = 400;

/**
 * Keeps one repository's flows in sync. The reconciler brings the state in line with the disk (scan, hash); the
 * planner says what differs from what the service acknowledged; the uploader sends it; the scheduler runs all
 * of it in one loop and decides when to try again. The watcher and the presence check feed the loop.
 */
export class SyncEngine extends EventEmitter<EngineEvents> {
  readonly repoId: number;
  private readonly repo: RepositorySpec;
  private readonly layout: FlowLayout;
  private readonly watcher: FlowWatcher;
  private readonly coalescer: Coalescer;
  private readonly reconciler: Reconciler;
  private readonly presence: PresenceCheck;
  private readonly scheduler: Scheduler;
  private readonly rules: IgnoreRules;
  private readonly guard: RootGuard;
  /** Files the rescans found that the watcher had not reported. */
  private missed = 0;
  private rescanTimer: NodeJS.Timeout | null = null;
  /** New folders whose watch is in place, waiting for their rescan (one job for all of them). */
  private readonly newFolders = new Set<string>();
  private newFoldersQueued = false;
  private readonly retries: FlowRetries;
  private phase: SyncPhase = 'idle';
  private message: string | null = null;
  /** The phase a round left, to return to after a scan while a retry is waited for. */
  private resting: { phase: SyncPhase; message: string | null; fault?: StorageFault } = {
    phase: 'idle',
    message: null,
  };
  /** Since an outage began: the files sent after it, for the recovered event. */
  private outage: { files: number } | null = null;
  /**
   * Files the state could not record (the data folder full or read-only), counted by a scan that writes nothing;
   * the rescan that is due from the failure on records them once it can.
   */
  private unrecorded = 0;
  private counting = false;
  /**
   * What the last failed state write said of the data folder, while it is the reason nothing moves: set with the
   * 'storage' phase (setPhase), kept through a scan, cleared by any other phase.
   */
  private storageFault: StorageFault | null = null;
  private presenceTimer: NodeJS.Timeout | null = null;
  private presenceQueued = false;
  private stopped = false;
  /** Whether the service takes bases, once asked (and when a "no" was heard, to ask again after a while). */
  private bases: { takes: boolean; at: number } | null = null;
  /** Deletions held at the last round (0: none); `allowDeletions` lets the next round send up to this many. */
  private heldDeletions = 0;
  private deletionsAllowed = 0;
  /** The deletions waiting at the last plan, and since when that count stood (see DELETION_SETTLE_MS). */
  private deletionsSeen: DeletionsSeen | null = null;
  /** How long the deletions of the last plan still settle (0: they went, or were held); the round looks again then. */
  private settlingMs = 0;
  /** Whether a state that knew nothing learned the service's files (once per engine). */
  private learned = false;
  /** Files on the service that this checkout does not have, as a first look at the service found them. */
  private notInCheckout = 0;
  /** Set while its user has the repository paused: rounds send nothing, the rest (watch, scan, count) goes on. */
  private paused: { since: string | null } | null;

  constructor(private readonly options: SyncEngineOptions) {
    super();
    this.repo = options.repo;
    this.paused = options.paused ?? null;
    if (this.paused) {
      this.phase = 'paused';
      this.resting = { phase: 'paused', message: null };
    }
    this.layout = new FlowLayout(options.repo.flowRoots);
    const rules = new IgnoreRules(options.repo.root);
    this.rules = rules;
    this.retries = new FlowRetries(
      options.retryBaseMs ?? DEFAULT_TIMINGS.retryBaseMs,
      options.retryMaxMs ?? DEFAULT_TIMINGS.retryMaxMs,
    );
    this.repoId = options.state.ensureRepo(
      options.repo.root,
      options.serviceKey,
      options.repo.owner,
      options.repo.name,
    );
    this.guard = new RootGuard(options.repo.root, this.layout.roots, (root) =>
      options.state.hasAcknowledgedUnder(this.repoId, root),
    );
    this.reconciler = new Reconciler({
      repo: options.repo,
      state: options.state,
      hasher: options.hasher,
      repoId: this.repoId,
      layout: this.layout,
      rules,
      guard: this.guard,
      setPhase: (phase, message) => this.setPhase(phase, message),
      onHashed: (done, total) => this.emit('progress', { stage: 'hashing', done, total }),
      forgetRoot: (root) => this.watcher.forget(root),
    });
    this.coalescer = new Coalescer(
      (paths) => this.inBackground(this.local(() => this.reconciler.applyChanges(paths))),
      options.quietMs ?? 30,
      options.maxWaitMs ?? 500,
    );
    this.watcher = new FlowWatcher(
      options.repo.root,
      rules,
      (path) => this.coalescer.add(path),
      (error) => {
        this.setPhase(this.phase, `watching failed: ${error.message}`);
        this.inBackground(this.restartWatcher('watcher error'));
      },
      () => this.setPhase(this.phase, this.message),
      options.watchBudget,
      (folder) => this.newFolder(folder),
    );
    this.presence = new PresenceCheck({
      repo: options.repo,
      layout: this.layout,
      rules,
      watcher: this.watcher,
      reconciler: this.reconciler,
      guard: this.guard,
      isMissing: () => this.phase === 'missing',
      setMissing: (message) => this.setPhase('missing', message),
      changed: () => this.scheduler.want(),
      // Already in the scheduler's queue (the presence check is local work): rescanned here, not queued behind it.
      cameBack: async (roots) =>
        this.found(`${roots.join(', ')} came back`, await this.reconciler.rescan(roots)),
      heldChanged: () => this.setPhase(this.phase, this.message),
    });
    this.scheduler = new Scheduler(
      {
        // A round that fails outside the upload (a rescan) backs off like any other failure.
        round: () =>
          this.uploadRound().then(
            ({ outcome }) => outcome,
            (error: unknown) => this.failedRound(error),
          ),
        probe: () => this.probe(),
        settled: (outcome) => this.settled(outcome),
      },
      {
        retryBaseMs: options.retryBaseMs ?? DEFAULT_TIMINGS.retryBaseMs,
        retryMaxMs: options.retryMaxMs ?? DEFAULT_TIMINGS.retryMaxMs,
        probeMinMs: options.probeMinMs ?? DEFAULT_TIMINGS.probeMinMs,
        probeMaxMs: options.probeMaxMs ?? DEFAULT_TIMINGS.probeMaxMs,
      },
    );
  }

  get flowRoots(): readonly string[] {
    return this.layout.roots;
  }

  /**
   * The engine's status. `counts` is read from the state when a listener looks at it, not when the status is
   * emitted: it is an aggregate over every file (20 ms at 100,000 files), and most listeners never read it.
   */
  status(): SyncStatus {
    const { state } = this.options;
    const repoId = this.repoId;
    // A flow root held (absent, empty, another drive) is the repository missing in part, whatever the round said.
    const held = [...this.guard.held.values()];
    const missing = held.length > 0 && (this.phase === 'idle' || this.phase === 'syncing');
    const unrecorded = this.storageFault ? this.unrecorded : 0;
    const counts = () => {
      const counts = state.counts(repoId);
      return { ...counts, pending: counts.pending + unrecorded };
    };
    return {
      phase: missing ? 'missing' : this.phase,
      get counts() {
        return counts();
      },
      message:
        this.phase === 'storage' && this.storageFault
          ? storageMessage(this.storageFault, state.folder, counts().pending)
          : ((missing ? held.join('; ') : this.message) ?? (this.standingProblems().join('; ') || null)),
      retryAt: this.scheduler.retryAt,
      missed: this.missed,
      heldDeletions: this.heldDeletions,
      notInCheckout: this.notInCheckout,
      paused: this.paused !== null,
      pausedSince: this.paused?.since ?? null,
      nothingToSync: this.nothingToSync(),
    };
  }

  /**
   * Its user paused the repository: nothing is sent, and the service is not asked, until resume(). The watcher,
   * the rescans and the state go on, so that what changes meanwhile is counted as pending (a paused engine used to
   * be a stopped one, and `status` said "0 pending" for edits it would send at resume) and sent at once on resume.
   */
  pause(since: string): void {
    if (this.paused) return;
    this.paused = { since };
    this.resting = { phase: 'paused', message: null };
    if (this.phase !== 'missing') this.setPhase('paused', null);
    else this.setPhase(this.phase, this.message);
  }

  /** Sends what waited while paused, now. */
  resume(): Promise<void> {
    if (!this.paused) return Promise.resolve();
    this.paused = null;
    this.resting = { phase: 'idle', message: null };
    if (this.phase === 'paused') this.setPhase('idle', null);
    else this.setPhase(this.phase, this.message);
    return this.syncAndCheck();
  }

  /**
   * The line that says none of the flow roots is there, so there is nothing to sync (see nothingToSync); else null.
   * Roots held (the service has files of them: another branch, a drive not mounted) say that instead.
   */
  nothingToSync(): string | null {
    if (this.guard.held.size > 0) return null;
    return nothingToSync(this.repo.root, this.layout.roots);
  }

  /**
   * What stays wrong with the repository until its user changes it, shown while nothing more urgent is: flow
   * roots that are links, .gitignore lines not applied, folders not watched.
   */
  private standingProblems(): string[] {
    const conflicts = this.options.state.conflictCount(this.repoId);
    const nothing = this.nothingToSync();
    return [
      ...(nothing !== null ? [nothing] : []),
      ...(conflicts > 0 ? [conflictLine(conflicts)] : []),
      ...(this.heldDeletions > 0 ? [heldLine(this.heldDeletions)] : []),
      ...(this.notInCheckout > 0
        ? [
            `${this.notInCheckout} ${this.notInCheckout === 1 ? 'file' : 'files'} on the service ${this.notInCheckout === 1 ? 'is' : 'are'} not in this checkout (kept there, not deleted): \`flowsync resolve --not-in-checkout\` lists them`,
          ]
        : []),
      ...this.reconciler.refusedRoots.values(),
      ...this.watcher.refused.values(),
      ...this.rules.problems.values(),
      ...this.retries.messages(),
    ];
  }

  /** Scans, sends what differs, then keeps watching. Resolves once watching, even if it went offline. */
  async start(): Promise<void> {
    await this.initialSync({ watchFirst: true });
    await this.watch();
  }

  /**
   * The first scan and round of uploads. With `watchFirst` (`flowsync start`) and a repository the state knows
   * nothing of yet, watching starts before the scan: the scan sees what happened before the watcher was ready,
   * the watcher everything after, and `watch()` need not scan again (one scan of 100,000 files fewer in a first
   * sync). A repository synced before is scanned first: in sync again 2.6 s after a restart instead of 4.7 s
   * behind chokidar's walk (bench/sync.ts); sharing the two cores with the walk was slower still (4.1 s).
   */
  async initialSync({ watchFirst = false } = {}): Promise<void> {
    this.presence.remember();
    if (watchFirst && !this.options.state.hasFiles(this.repoId)) await this.presence.watchPresentRoots();
    // A state that cannot be written now is a state of the engine, not a failed start: the round retries.
    await this.local(() => this.reconciler.rescan(), false).catch((error: unknown) => {
      if (this.stateRefused(error) === null) throw error;
    });
    await this.sync();
    await this.checkQuietly();
  }

  /**
   * The service checked against the state (checkService) where it can be; a failure (offline, a gateway) waits for
   * the next check, at the next periodic rescan.
   */
  private async checkQuietly(): Promise<void> {
    // Only after a round that went through: a service failing or out of reach is not asked once more for this.
    if (this.stopped || this.phase !== 'idle') return;
    await this.checkService().catch(() => 0);
  }

  /**
   * Starts watching, then looks once more at the roots not watched before the first scan, for what changed
   * while the watcher was being set up (seconds, for a very large repository), so nothing done meanwhile is missed.
   */
  async watch(): Promise<void> {
    const fresh = await this.presence.watchPresentRoots();
    if (fresh.length > 0) await this.local(() => this.reconciler.rescan(fresh));
    const interval = this.options.presenceIntervalMs ?? 1000;
    this.presenceTimer = setInterval(() => {
      // One check at a time: a long round must not pile up a check per second behind it.
      if (this.presenceQueued || this.stopped) return;
      this.presenceQueued = true;
      this.inBackground(
        this.local(() => this.presence.check(), false).finally(() => (this.presenceQueued = false)),
      );
    }, interval);
    this.presenceTimer.unref();
    this.scheduleRescan();
  }

  /** The next periodic rescan, at the interval ±20 %, so that many repositories do not rescan at once. */
  private scheduleRescan(): void {
    if (this.stopped) return;
    const interval = this.options.rescanIntervalMs ?? RESCAN_INTERVAL_MS;
    this.rescanTimer = setTimeout(
      () => {
        this.inBackground(
          this.verify('periodic')
            .then(() => this.checkQuietly())
            .finally(() => {
              this.emit('rescanned');
              this.scheduleRescan();
            }),
        );
      },
      interval * (0.8 + Math.random() * 0.4),
    );
    this.rescanTimer.unref();
  }

  /**
   * A rescan that checks the watcher (periodic, after a new folder's watch is in place, after a root came back or
   * the watcher failed): what it finds is sent, logged (the `missed` event) and counted in the status.
   */
  private async verify(reason: string, under?: readonly string[]): Promise<void> {
    await this.local(async () => this.found(reason, await this.reconciler.rescan(under)));
  }

  /** What a verifying rescan found: logged and counted, so that a miss is never silent. */
  private found(reason: string, files: number): void {
    // With the watcher's own reports still waiting, what the rescan found may be theirs: sent, not counted.
    if (files === 0 || !this.coalescer.idle) return;
    this.missed += files;
    this.emit('missed', { files, reason });
    this.setPhase(this.phase, this.message);
  }

  /**
   * A new folder is watched now: rescanned, with every other new folder that settled meanwhile, in one job (a
   * checkout that makes 3,000 folders queued 3,000 rescans, and the presence check waited behind them).
   */
  private newFolder(folder: string): void {
    this.newFolders.add(folder);
    if (this.newFoldersQueued) return;
    this.newFoldersQueued = true;
    this.inBackground(
      this.local(async () => {
        this.newFoldersQueued = false;
        const folders = [...this.newFolders].sort();
        this.newFolders.clear();
        const outermost = folders.filter(
          (folder, index) => !folders.slice(0, index).some((other) => folder.startsWith(`${other}/`)),
        );
        this.found('new folder', await this.reconciler.rescan(outermost));
      }),
    );
  }

  /** After a watcher error: every root watched anew, then rescanned, since events may have been lost. */
  private async restartWatcher(reason: string): Promise<void> {
    if (this.stopped) return;
    for (const root of this.layout.roots) this.watcher.forget(root);
    await this.presence.watchPresentRoots();
    await this.verify(reason);
  }

  /** One scan and one round of uploads, without watching: `flowsync sync`. Throws when the service is unreachable. */
  async syncOnce(): Promise<SyncReport> {
    const ran: { round?: Awaited<ReturnType<SyncEngine['uploadRound']>> } = {};
    await this.scheduler.run(async () => {
      await this.reconciler.rescan();
      ran.round = await this.uploadRound();
    });
    if (!ran.round) return emptyReport(); // stopped before it ran
    if (ran.round.error !== undefined) throw ran.round.error;
    this.settled(ran.round.outcome);
    await this.checkQuietly();
    return ran.round.report;
  }

  /**
   * What a round would send now, flow by flow, and nothing sent: a rescan, then the same planner a round uses
   * (`flowsync sync --dry-run`). The rescan records what it finds in the state this engine was given, so a dry run
   * gives it a copy.
   */
  async plan(): Promise<PlannedFlow[]> {
    const { state } = this.options;
    await this.scheduler.run(async () => {
      await this.reconciler.rescan();
    });
    this.guard.checkAll();
    const pending = state.pendingFlows(this.repoId);
    const options = await this.planOptions();
    const { plans, stillRejected } = planUploads(
      state,
      this.repoId,
      pending.filter((flow) => !this.guard.holds(flow)),
      options,
    );
    const planned: PlannedFlow[] = plans.map((plan) => ({
      flowPath: plan.flowPath,
      action: 'send',
      message: null,
      created: plan.upserts.filter((file) => file.ackedHash === null).map((file) => file.path),
      updated: plan.upserts.filter((file) => file.ackedHash !== null).map((file) => file.path),
      deleted: plan.deletes.map((file) => file.path),
    }));
    const none = { created: [], updated: [], deleted: [] };
    // A held root sends nothing of its flows, and what the rescan did not find under it is not taken as gone.
    for (const [root, message] of this.guard.held)
      planned.push({ flowPath: root, action: 'held', message, ...none });
    for (const flowPath of stillRejected)
      planned.push({ flowPath, action: 'refused', message: null, ...none });
    for (const conflict of state.conflicts(this.repoId))
      planned.push({
        flowPath: `${conflict.flowPath}/${conflict.path}`,
        action: 'conflict',
        message: conflictMessage(conflict),
        ...none,
      });
    if (this.heldDeletions > 0)
      planned.push({ flowPath: '', action: 'held', message: heldLine(this.heldDeletions), ...none });
    return planned.sort((a, b) => a.flowPath.localeCompare(b.flowPath));
  }

  /** Asks for a round now (a change, "sync now", or the network coming back), even while backing off. */
  sync(): Promise<void> {
    return this.scheduler.now();
  }

  /**
   * Its user's "Sync now": a round, then the check of the service, so that what another checkout wrote there (a
   * conflict, a file not in this checkout) shows at once, not at the next periodic rescan.
   */
  async syncAndCheck(): Promise<void> {
    await this.sync();
    await this.checkQuietly();
  }

  /**
   * Its user said the held deletions may go (`flowsync sync --yes`, "Delete them on the service"): the next round
   * sends them, up to as many as are held now (more than that is a new question).
   */
  allowDeletions(): void {
    this.deletionsAllowed = Math.max(this.heldDeletions, this.options.state.deletionCount(this.repoId));
  }

  /**
   * Sends the deletions waiting now ("Delete them on the service", `resolve --held --mine`) in a round, and returns
   * how many went: counted in the state, which knows them also in an engine that has not run a round yet.
   */
  async sendHeldDeletions(): Promise<number> {
    const waiting = () => this.options.state.deletionCount(this.repoId);
    const before = waiting();
    this.allowDeletions();
    await this.sync();
    return before - waiting();
  }

  /**
   * Settles conflicts (all of them when `which` is null). `mine`: what is on disk is sent on top of the service's
   * version (its hash becomes the base), in the round that follows. `theirs`: the service's version is written to
   * disk (by the containment rule: atomically, never through a link) or, when the service has none, the file is
   * removed; nothing is sent. Returns the files settled (a file named that is not in conflict is not among them),
   * and those that could not be written, each with why: they stay in conflict, and the others are settled.
   */
  async resolve(
    which: readonly { flowPath: string; path: string }[] | null,
    side: 'mine' | 'theirs',
  ): Promise<{ resolved: { flowPath: string; path: string }[]; notWritten: NotWrittenFile[] }> {
    const { state, client } = this.options;
    const named = which === null ? null : new Set(which.map((f) => serviceFileKey(f.flowPath, f.path)));
    const conflicts = state
      .conflicts(this.repoId)
      .filter((c) => named === null || named.has(serviceFileKey(c.flowPath, c.path)));
    const notWritten: NotWrittenFile[] = [];
    if (conflicts.length === 0) return { resolved: [], notWritten };
    let resolved: typeof conflicts = conflicts;
    if (side === 'mine') {
      await this.scheduler.run(async () => {
        for (const c of conflicts) state.settleConflict(this.repoId, c.flowPath, c.path, c.serviceHash);
      });
    } else {
      const copies = await readServiceFiles(client, this.serviceRepo, conflicts);
      resolved = [];
      await this.scheduler.run(async () => {
        for (const c of conflicts) {
          const key = serviceFileKey(c.flowPath, c.path);
          const copy = copies.found.get(key) ?? null;
          const why = copies.unwritable.get(key)?.why ?? this.putOnDisk(c.flowPath, c.path, copy);
          if (why !== null) {
            notWritten.push({ flowPath: c.flowPath, path: c.path, reason: why });
            continue;
          }
          state.settleConflict(this.repoId, c.flowPath, c.path, copy?.hash ?? null);
          resolved.push(c);
        }
      });
    }
    this.scheduler.want();
    this.setPhase(this.phase, this.message);
    return { resolved: resolved.map(({ flowPath, path }) => ({ flowPath, path })), notWritten };
  }

  /**
   * Puts back on disk, from the service's copy, the files whose deletion is held (or all files gone from disk that
   * the service has): "Restore them on disk", `flowsync resolve --held --theirs`. Returns how many were written,
   * and those that could not be, each with why (their deletion stays held).
   */
  async restoreDeleted(): Promise<{ restored: number; notWritten: NotWrittenFile[] }> {
    const { state, client } = this.options;
    const gone = state.goneAcknowledged(this.repoId);
    const notWritten: NotWrittenFile[] = [];
    if (gone.length === 0) return { restored: 0, notWritten };
    const copies = await readServiceFiles(client, this.serviceRepo, gone);
    let restored = 0;
    await this.scheduler.run(async () => {
      for (const file of gone) {
        const key = serviceFileKey(file.flowPath, file.path);
        const unwritable = copies.unwritable.get(key);
        const copy = copies.found.get(key);
        if (!copy && !unwritable) continue; // gone on the service too: nothing to put back, no deletion to send
        const why = unwritable?.why ?? this.putOnDisk(file.flowPath, file.path, copy!);
        if (why !== null) {
          notWritten.push({ flowPath: file.flowPath, path: file.path, reason: why });
          continue;
        }
        state.settleConflict(this.repoId, file.flowPath, file.path, copy!.hash);
        restored++;
      }
    });
    if (notWritten.length === 0) this.heldDeletions = 0;
    this.scheduler.want();
    this.setPhase(this.phase, this.message);
    return { restored, notWritten };
  }

  /**
   * The files on the service that this checkout never had: not on disk here, never acknowledged by it, not in
   * conflict (a file gone here that it acknowledged is a deletion, held or sent by the usual rules), and under a
   * flow root that is there. A fresh state (CI, a rebuilt state) counts them when it learns the service
   * (learnService); this lists them now, for its user to delete them on the service or write them to disk. Empty
   * against a service that cannot list its files.
   */
  async filesNotInCheckout(): Promise<ListedServiceFile[]> {
    const { state, client } = this.options;
    if (!(await this.serviceTakesBases())) return [];
    const listed = await listServiceFiles(client, this.serviceRepo, null);
    const known = new Set<string>();
    for (const file of state.fileStates(this.repoId))
      if (file.localHash !== null || file.ackedHash !== null || file.conflict)
        known.add(serviceFileKey(file.flowPath, file.path));
    for (const c of state.conflicts(this.repoId)) known.add(serviceFileKey(c.flowPath, c.path));
    // Under a flow root that is held (emptied, another drive) or not there at all (a drive not mounted, a sparse
    // checkout), the disk says nothing: none of its files is offered to delete, nor written where the root is not.
    this.guard.checkAll();
    const absentRoots = this.layout.roots.filter((root) => notRealFolder(this.repo.root, root) !== null);
    const files = listed.filter(
      (file) =>
        !known.has(serviceFileKey(file.flowPath, file.path)) &&
        !this.guard.holds(file.flowPath) &&
        !absentRoots.some((root) => file.flowPath.startsWith(`${root}/`)),
    );
    this.countNotInCheckout(files.length);
    return files;
  }

  /**
   * Deletes on the service the files this checkout never had ("Delete them on the service", `flowsync resolve
   * --not-in-checkout --mine`): each is taken as acknowledged at the hash the service listed and gone here, so the
   * next round sends it as any deletion, an explicit path on that base (a file changed there since is a conflict,
   * not deleted), through the held-deletion guard's allowance as `sendHeldDeletions`. `seen`: only these files, on
   * the versions its user saw listed (one written there since is not deleted: its base differs, a conflict; one
   * added since is not among them). Returns how many went.
   */
  async deleteNotInCheckout(seen?: readonly SeenFile[]): Promise<number> {
    const { state } = this.options;
    const listed = onlySeen(await this.filesNotInCheckout(), seen);
    if (listed.length === 0) return 0;
    // Those taken: a file that is on disk now (written since the listing) is not, and goes by the usual rules.
    let files: ListedServiceFile[] = [];
    await this.scheduler.run(async () => {
      state.adoptServiceFiles(this.repoId, listed);
      const gone = new Set(
        state.goneAcknowledged(this.repoId).map((file) => serviceFileKey(file.flowPath, file.path)),
      );
      files = listed.filter((file) => gone.has(serviceFileKey(file.flowPath, file.path)));
    });
    // A conflict refuses its flow whole, and the flow's other files go in the round after: a round more while the
    // last one sent some (not while the service does not answer).
    let left = this.stillToDelete(files);
    for (let rounds = 0; rounds < 3 && left.waiting > 0; rounds++) {
      this.allowDeletions();
      await this.sync();
      const now = this.stillToDelete(files);
      const progressed = now.waiting < left.waiting;
      left = now;
      if (!progressed) break;
    }
    const gone = files.length - left.waiting - left.conflicts;
    this.countNotInCheckout(this.notInCheckout - gone);
    return gone;
  }

  /** Of these files taken as gone here: how many deletions still wait, and how many are conflicts now. */
  private stillToDelete(files: readonly { flowPath: string; path: string }[]): {
    waiting: number;
    conflicts: number;
  } {
    const { state } = this.options;
    const conflicts = new Set(
      state.conflicts(this.repoId).map((file) => serviceFileKey(file.flowPath, file.path)),
    );
    const waiting = new Set(
      state.goneAcknowledged(this.repoId).map((file) => serviceFileKey(file.flowPath, file.path)),
    );
    let stillWaiting = 0;
    let inConflict = 0;
    for (const file of files) {
      const key = serviceFileKey(file.flowPath, file.path);
      if (conflicts.has(key)) inConflict++;
      else if (waiting.has(key)) stillWaiting++;
    }
    return { waiting: stillWaiting, conflicts: inConflict };
  }

  /**
   * Writes to disk, from the service's copy, the files this checkout never had ("Restore them on disk", `flowsync
   * resolve --not-in-checkout --theirs`), as `restoreDeleted` does: by the containment rule, and recorded as in
   * sync at once. Never over anything on disk (a file of that name that appeared since is its user's), and not a
   * file this checkout would not sync (outside its flow roots, or ignored here): those are listed with why.
   * `seen`: only these files (the service's version now is written, whichever its user saw).
   */
  async restoreNotInCheckout(seen?: readonly SeenFile[]): Promise<{
    restored: number;
    skipped: { flowPath: string; path: string; reason: string }[];
  }> {
    const { state, client } = this.options;
    const all = await this.filesNotInCheckout();
    const files = onlySeen(all, seen);
    const skipped: { flowPath: string; path: string; reason: string }[] = [];
    const wanted = files.filter((file) => {
      const repoPath = `${file.flowPath}/${file.path}`;
      const reason =
        this.layout.locate(repoPath)?.flowPath !== file.flowPath
          ? `not under this checkout's flow roots (${this.layout.roots.join(', ')})`
          : this.rules.ignores(repoPath)
            ? 'ignored here (.gitignore): it would not be synced'
            : null;
      if (reason !== null) skipped.push({ flowPath: file.flowPath, path: file.path, reason });
      return reason === null;
    });
    if (wanted.length === 0) return { restored: 0, skipped };
    const copies = await readServiceFiles(client, this.serviceRepo, wanted);
    let restored = 0;
    await this.scheduler.run(async () => {
      for (const file of wanted) {
        const { flowPath, path } = file;
        const key = serviceFileKey(flowPath, path);
        const unwritable = copies.unwritable.get(key);
        if (unwritable) {
          skipped.push({ flowPath, path, reason: unwritable.why });
          continue;
        }
        const copy = copies.found.get(key);
        if (!copy) {
          skipped.push({ flowPath, path, reason: 'gone from the service meanwhile' });
          continue;
        }
        if (somethingAt(join(this.repo.root, flowPath, path))) {
          skipped.push({ flowPath, path, reason: 'something of that name is on disk now: not overwritten' });
          continue;
        }
        const why = this.putOnDisk(flowPath, path, copy);
        if (why !== null) {
          skipped.push({ flowPath, path, reason: why });
          continue;
        }
        state.adoptServiceFiles(this.repoId, [{ ...file, hash: copy.hash }]);
        restored++;
      }
    });
    this.countNotInCheckout(all.length - restored);
    this.scheduler.want();
    return { restored, skipped };
  }

  /** The count of files on the service not in this checkout, said in the status when it changes. */
  private countNotInCheckout(files: number): void {
    if (files === this.notInCheckout) return;
    this.notInCheckout = files;
    this.setPhase(this.phase, this.message);
  }

  /**
   * Compares what the service holds with what this checkout acknowledged, in one `list_flows` call (each flow's
   * aggregate hash) and a listing of each flow that differs: a file the service lost (a wiped database) or holds in
   * another version (a restored backup, another writer, a late duplicate) is a conflict, shown and settled as any;
   * files on the service this checkout never had are counted. Only with a service that lists (flowsync's own);
   * flows sent without an answer, under a held root, are left for their round. Returns the conflicts found.
   */
  async checkService(): Promise<number> {
    const { state, client } = this.options;
    if (!(await this.serviceTakesBases())) return 0;
    const { flows } = await client.flowDef.listFlows({
      repo_owner: this.repo.owner,
      repo_name: this.repo.name,
    });
    const held = new Set(state.uncertainFlows(this.repoId));
    const skip = (flowPath: string) => held.has(flowPath) || this.guard.holds(flowPath);
    const expected = new Map<string, { path: string; hash: string; localHash: string | null }[]>();
    for (const file of state.acknowledged(this.repoId)) {
      const files = expected.get(file.flowPath) ?? [];
      files.push({
        path: file.path,
        hash: file.ackedHash,
        // A file on disk but not sent (over 1 MiB, binary…) is not deleted here (three-way.ts): changed, as said.
        localHash: file.localHash,
      });
      expected.set(file.flowPath, files);
    }
    const onService = new Map(
      flows.filter((flow) => flow.files > 0).map((flow) => [flow.flow_path, flow.hash]),
    );
    const differing = [...new Set([...expected.keys(), ...onService.keys()])].filter((flowPath) => {
      if (skip(flowPath)) return false;
      const files = expected.get(flowPath);
      const want = files ? createHash('sha256').update(flowHashInput(files)).digest('hex') : null;
      return want !== (onService.get(flowPath) ?? null);
    });
    const found: Parameters<typeof recordConflicts>[1][number][] = [];
    let unknown = 0;
    for (const flowPath of differing) {
      const listed = new Map(
        (await listServiceFiles(client, this.serviceRepo, flowPath)).map((file) => [file.path, file]),
      );
      const acknowledged = expected.get(flowPath) ?? [];
      for (const file of acknowledged) {
        const now = listed.get(file.path);
        if (now?.hash === file.hash) continue;
        found.push({
          flowPath,
          path: file.path,
          baseHash: file.hash,
          serviceHash: now?.hash ?? null,
          sentHash: file.localHash,
          writtenBy: now?.writtenBy ?? null,
          writtenAt: now?.writtenAt ?? null,
        });
      }
      const known = new Set(acknowledged.map((file) => file.path));
      unknown += [...listed.keys()].filter((path) => !known.has(path)).length;
    }
    // Recorded in the queue, and only where the state still acknowledges what was compared: a round that ran
    // while the service was listed changed it (its own write, not a conflict).
    let recorded: typeof found = [];
    await this.scheduler.run(async () => {
      const acked = new Map<string, Map<string, string | null>>();
      const ackedOf = (flowPath: string) => {
        let files = acked.get(flowPath);
        if (!files) {
          files = new Map(state.filesOfFlow(this.repoId, flowPath).map((f) => [f.path, f.ackedHash]));
          acked.set(flowPath, files);
        }
        return files;
      };
      const stillAcked = (c: (typeof found)[number]) => ackedOf(c.flowPath).get(c.path) === c.baseHash;
      recorded = recordConflicts({ state, repoId: this.repoId, target: this.repo }, found.filter(stillAcked));
    });
    if (differing.length > 0 || this.notInCheckout !== unknown) {
      this.notInCheckout = unknown;
      this.setPhase(this.phase, this.message);
    }
    if (found.length > 0) this.scheduler.want(); // own versions adopted: sent on them now
    return recorded.length;
  }

  /** Where a file of this repository (its path relative to the root) sits among the flows; null: in none. */
  locate(repoPath: string): { flowPath: string; path: string } | null {
    return this.layout.locate(repoPath);
  }

  /** Every version the service keeps of a file (newest first), deleted ones included: `flowsync history`. */
  async history(flowPath: string, path: string): Promise<FileVersion[]> {
    return fileVersions(this.options.client, this.repo, flowPath, path);
  }

  /**
   * One version's content for a page (null: a deletion, or too large to show, `tooLarge` says so), refused when
   * the number is not one of this file's versions.
   */
  async showVersion(
    flowPath: string,
    path: string,
    version: number,
  ): Promise<{ content: string | null; tooLarge: string | null }> {
    return versionToShow(this.options.client, this.repo, flowPath, path, version);
  }

  /**
   * Writes a version the service keeps of a file to disk (a deletion removes it), by the containment rule, as
   * its user would: it is then sent as any edit, on this checkout's base (`flowsync restore`, the window's
   * Restore). Refused when the number is not one of this file's versions.
   */
  async restoreVersion(flowPath: string, path: string, version: number): Promise<{ deleted: boolean }> {
    checkServiceFile(this.layout, 'flowsync restore', flowPath, path);
    const { content } = await versionText(this.options.client, this.repo, flowPath, path, version);
    replaceContained(this.repo.root, `${flowPath}/${path}`, content);
    return { deleted: content === null };
  }

  /**
   * What a conflict is, as two diffs from the version last synced here: to the service's version (what the other
   * writer did) and to the disk's (what was done here). Null when the file is not in conflict.
   */
  async compare(flowPath: string, path: string): Promise<ConflictComparison | null> {
    const conflict = this.options.state
      .conflicts(this.repoId)
      .find((c) => c.flowPath === flowPath && c.path === path);
    if (!conflict) return null;
    const sides = await conflictSides(this.options.client, this.repo, conflict);
    const file = `${flowPath}/${path}`;
    const base = { side: sides.base, label: 'last synced here' };
    return {
      toService: sideDiff(file, base, { side: sides.service, label: 'on the service' }),
      toDisk: sideDiff(file, base, { side: sides.disk, label: 'here' }),
    };
  }

  /**
   * Writes the service's version of a file into the repository (null: removes the file), and records it as the
   * state's view of the disk at once, so that no round in between sends what was there before. Returns why the
   * file was not written (a folder on the way that is a link, a path the agent never writes, a disk error), or
   * null: one file that cannot be written is its own line, never the end of the others.
   */
  private putOnDisk(
    flowPath: string,
    path: string,
    copy: { hash: string; content: string } | null,
  ): string | null {
    const { state } = this.options;
    const relative = `${flowPath}/${path}`;
    let replaced: boolean;
    try {
      replaced = replaceContained(this.repo.root, relative, copy?.content ?? null);
    } catch (error) {
      if (error instanceof NotWritten) return error.why;
      const code = (error as NodeJS.ErrnoException).code;
      if (typeof code === 'string') return `the disk refused it (${code})`;
      throw error;
    }
    if (copy === null) {
      if (replaced) state.markGone(this.repoId, [{ flowPath, path }]);
      return replaced ? null : 'a folder on the way is not a folder of the repository';
    }
    const stat = lstatSync(join(this.repo.root, relative));
    state.saveLocal(this.repoId, [
      {
        flowPath,
        path,
        size: stat.size,
        mtimeMs: stat.mtimeMs,
        ctimeMs: stat.ctimeMs,
        ino: stat.ino,
        localHash: copy.hash,
        warning: null,
      },
    ]);
    return null;
  }

  /** The repository as the service side sees it: its name, and the layout its answers are checked against. */
  private get serviceRepo(): ServiceRepository {
    return { owner: this.repo.owner, name: this.repo.name, layout: this.layout };
  }

  /**
   * How the next round plans: with bases when the service takes them (asked once; a "no" asked again after a
   * minute, and a "no" from a service that said yes before is a failure, not a reason to send without them), and
   * with deletions held when there are more than the guard lets through. Throws what asking the service threw.
   */
  private async planOptions(): Promise<{ bases: boolean; holdDeletions: boolean }> {
    const { state } = this.options;
    const decided = deletionVerdict({
      waiting: state.deletionCount(this.repoId),
      acknowledged: state.acknowledgedCount(this.repoId),
      allowed: this.deletionsAllowed,
      guard: this.repo.deletionGuard === undefined ? DEFAULT_DELETION_GUARD : this.repo.deletionGuard,
      watching: this.presenceTimer !== null,
      seen: this.deletionsSeen,
      now: Date.now(),
    });
    this.deletionsSeen = decided.seen;
    const held = decided.verdict === 'hold' ? decided.held : 0;
    this.settlingMs = decided.verdict === 'settle' ? decided.waitMs : 0;
    if (held !== this.heldDeletions) {
      this.heldDeletions = held;
      this.setPhase(this.phase, this.message);
    }
    const bases = await this.serviceTakesBases();
    if (bases) {
      await this.learnService();
      await this.settleUncertain();
    }
    return { bases, holdDeletions: decided.verdict !== 'send' };
  }

  /**
   * A state that knows nothing acknowledged (a first sync, a state rebuilt after damage, CI) learns the service's
   * files first, once: the versions this checkout wrote (the service names their writer) are its own bases, so its
   * edits of them go through; anyone else's are not, so an old clone's copy is a conflict, never an overwrite.
   * Files on the service that are not in this checkout are counted and said, neither deleted nor fetched.
   */
  private async learnService(): Promise<void> {
    const { state, client } = this.options;
    if (this.learned) return;
    this.learned = state.acknowledgedCount(this.repoId) > 0;
    if (this.learned) return;
    const listed = await listServiceFiles(client, this.serviceRepo, null);
    const own = listed.filter(
      (file) => this.repo.writer !== undefined && file.writtenBy === this.repo.writer,
    );
    state.adoptOwnVersions(this.repoId, own);
    const present = new Set<string>();
    for (const { flowPath, path } of state.presentFiles(this.repoId))
      present.add(serviceFileKey(flowPath, path));
    this.notInCheckout = listed.filter(
      (file) => !present.has(serviceFileKey(file.flowPath, file.path)),
    ).length;
    this.learned = true;
  }

  /**
   * Flows sent without an answer (a lost answer, a crash), settled by what the service lists of them: with bases
   * there is no full listing to send whatever the state holds, so the service is asked what it took. A few flows
   * are listed one by one, many by one listing of the repository.
   */
  private async settleUncertain(): Promise<void> {
    const { state, client } = this.options;
    const uncertain = state.uncertainFlows(this.repoId);
    if (uncertain.length === 0) return;
    const listed = new Map<string, Map<string, { hash: string; id: string; writtenBy: string | null }>>(
      uncertain.map((flowPath) => [flowPath, new Map()]),
    );
    const lists =
      uncertain.length <= 20
        ? await Promise.all(uncertain.map((flowPath) => listServiceFiles(client, this.serviceRepo, flowPath)))
        : [await listServiceFiles(client, this.serviceRepo, null)];
    for (const file of lists.flat()) listed.get(file.flowPath)?.set(file.path, file);
    for (const [flowPath, files] of listed)
      state.settleFromListing(this.repoId, flowPath, files, this.repo.writer);
  }

  private async serviceTakesBases(): Promise<boolean> {
    const { state, client } = this.options;
    if (this.bases?.takes === true) return true;
    if (this.bases && performance.now() - this.bases.at < SPEC_ONLY_RECHECK_MS) return false;
    const { bases } = await askCapabilities(client);
    if (!bases && state.serviceTakesBases(this.repoId))
      throw new ProtocolError(
        'The service answered that it does not know `capabilities`, which it answered before (another service at ' +
          'this address, or one in front of it?): nothing is sent without bases to a service that took them; retrying.',
        'svc/flow_def/public/capabilities',
        404,
      );
    if (bases) state.rememberServiceTakesBases(this.repoId);
    else state.rememberServiceSpecAlone(this.repoId);
    this.bases = { takes: bases, at: performance.now() };
    return bases;
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.reconciler.stopped = true;
    this.coalescer.clear();
    if (this.presenceTimer) clearInterval(this.presenceTimer);
    if (this.rescanTimer) clearTimeout(this.rescanTimer);
    await this.watcher.close();
    await this.scheduler.stop();
    this.setPhase('stopped', null);
  }

  /**
   * Work nobody awaits (a burst of changes, a presence check): a failure shows in the status, never crashes. A
   * burst the state could not record is counted as waiting; the rescan due records it once it can.
   */
  private inBackground(work: Promise<void>): void {
    work.catch(async (error: unknown) => {
      const fault = this.stateRefused(error);
      if (fault === null) return this.setPhase(this.phase, messageOf(error));
      await this.countUnrecorded();
      if (!this.stopped) this.setPhase('storage', null, fault);
    });
  }

  /** Counts what the state could not record, one count at a time (a burst of bursts needs only the last). */
  private async countUnrecorded(): Promise<void> {
    if (this.counting) return;
    this.counting = true;
    try {
      this.unrecorded = await this.reconciler.countUnrecorded();
    } catch {
      // The count is what was known before: the scan that failed is retried with the round.
    } finally {
      this.counting = false;
    }
  }

  /**
   * Whether the state refused a write (SQLITE_FULL, SQLITE_READONLY…, or a file of the data folder: ENOSPC,
   * EROFS…). Then nothing it should have recorded can be trusted to be there: a full rescan is due before the next
   * round sends anything (SQLite rolled the transaction back, so what was not recorded is still pending or
   * unknown; an acknowledgement not recorded is sent again, and the service answers "unchanged"). Returns the
   * fault, null when it is not one; the caller sets it with the 'storage' phase.
   */
  private stateRefused(error: unknown): StorageFault | null {
    const fault = storageFaultOf(error);
    if (fault === null) return null;
    const code = String((error as { code?: unknown }).code);
    const path = (error as { path?: unknown }).path;
    const inDataFolder =
      code.startsWith('SQLITE_') ||
      (typeof path === 'string' && path.startsWith(`${this.options.state.folder}/`));
    if (!inDataFolder) return null; // a repository's file that could not be read is not the state's fault
    this.reconciler.fullRescanDue = true;
    // SQLite says only "disk I/O error" when the folder turned read-only under it: the folder says which.
    return fault === 'failing' ? (folderFault(this.options.state.folder) ?? fault) : fault;
  }

  /** A round that threw: the state could not be written (wait, keep the work), or a failure of the service. */
  private async failedRound(error: unknown): Promise<RoundOutcome> {
    const fault = this.stateRefused(error);
    return fault === null ? failureOutcome(error, messageOf(error)) : this.storageOutcome(fault);
  }

  /** A round's end when the state refused a write: wait (the work stays), counting what waits. */
  private async storageOutcome(fault: StorageFault): Promise<RoundOutcome> {
    await this.countUnrecorded();
    const { state } = this.options;
    const waiting = state.counts(this.repoId).pending + this.unrecorded;
    return {
      kind: 'refused',
      phase: 'storage',
      message: storageMessage(fault, state.folder, waiting),
      fault,
    };
  }

  /** Local work goes through the scheduler's queue; after it, a round (unless told otherwise). */
  private async local(task: () => Promise<unknown>, thenRound = true): Promise<void> {
    try {
      await this.scheduler.run(async () => {
        await task();
        // A scan while a retry is waited for: back to what the last round said, until the retry.
        if (this.phase === 'scanning' && this.scheduler.retryAt !== null)
          this.setPhase(this.resting.phase, this.resting.message, this.resting.fault);
      });
    } finally {
      // Also after a failure (a .gitignore that could not be read): the round rescans, or backs off and does.
      if (thenRound) this.scheduler.want();
    }
  }

  private async uploadRound(): Promise<{ report: SyncReport; outcome: RoundOutcome; error?: unknown }> {
    const report = emptyReport();
    const started = performance.now();
    // Set again by this round's plan, if it plans: a round with nothing to plan must not wait on an earlier one's.
    this.settlingMs = 0;
    if (this.reconciler.fullRescanDue) {
      this.reconciler.fullRescanDue = false;
      await this.reconciler.rescan().catch((error: unknown) => {
        this.reconciler.fullRescanDue = true; // still due: the failed round backs off and tries again
        throw error;
      });
      this.unrecorded = 0; // recorded now, every file of it
    }
    // Paused: what the scans recorded stays pending, counted, until its user resumes.
    if (this.paused) return { report, outcome: { kind: 'settled' } };
    if (!existsSync(this.repo.root)) {
      this.setPhase('missing', folderGone(this.repo.root));
      return { report, outcome: { kind: 'settled' } };
    }
    // What could not be read at the last look is looked at again; while some of it stays unreadable, the round
    // ends 'recheck', so the scheduler's back-off (1 s doubling to 60 s) times the next look.
    const unreadable = await this.reconciler.retryUnreadable();
    const { state, client, hasher } = this.options;
    // A flow the service failed alone waits out its own back-off; the others are sent meanwhile.
    const pendingNow = () =>
      state
        .pendingFlows(this.repoId)
        .filter((flow) => !this.guard.holds(flow) && !this.retries.isWaiting(flow));
    // A page of flows at a time, planned and sent before the next is read: planning all at once held every pending
    // file's record twice (upserts and present) for the whole upload. Flows refused as they are plan nothing.
    // Looked at again just before sending: nothing of a root that is not there (or empty, or on another drive) is.
    const wasHeld = this.guard.held.size;
    this.guard.checkAll();
    if (this.guard.held.size !== wasHeld) this.setPhase(this.phase, this.message);
    // A conflict its user settled on disk (made the file what the service has) is settled.
    state.settleConflictsMatchingDisk(this.repoId);
    state.forgetGoneRejections(this.repoId);
    const pending = pendingNow();
    const sent: string[] = [];
    let flowsDone = 0;
    try {
      // Asking the service how to plan (bases, what a lost answer stored) is the round's first call: syncing.
      // (Not out of `storage`: its message says what waits, until a write goes through.)
      if (pending.length > 0 && this.phase !== 'storage') this.setPhase('syncing', null);
      const options = pending.length > 0 || this.heldDeletions > 0 ? await this.planOptions() : {};
      // Nothing pending: no deletion is waiting to settle either (they came back: a stash and its pop).
      if (!('holdDeletions' in options)) this.deletionsSeen = null;
      const plan = (flows: readonly string[]) => planUploads(state, this.repoId, flows, options).plans;
      for (const plans of pagesOf(pending, plan)) {
        // Stopping: the pages not sent yet stay pending, for the next start; the one in flight is in `in_flight`.
        // Stopping, or paused by its user meanwhile: the pages not sent yet stay pending.
        if (this.stopped || this.paused) return { report, outcome: { kind: 'settled' } };
        sent.push(plansKey(plans));
        if (sent.length === 1 && this.phase !== 'syncing') this.setPhase('syncing', null);
        const tally = await uploadPlans(
          {
            client,
            hasher,
            target: this.repo,
            layout: this.layout,
            state,
            repoId: this.repoId,
            retries: this.retries,
          },
          plans,
          (done) =>
            this.emit('progress', { stage: 'uploading', done: flowsDone + done, total: pending.length }),
        );
        flowsDone += plans.length;
        addTally(report, tally);
      }
      const done = this.restingOutcome(unreadable);
      // Deletions allowed go once: a later round that would delete as many again asks again.
      if (!('holdDeletions' in options) || !options.holdDeletions) this.deletionsAllowed = 0;
      if (sent.length === 0) return { report, outcome: done };
      report.ms = Math.round(performance.now() - started);
      state.recordSyncResult(this.repoId, null);
      if (this.outage) this.outage.files += report.created + report.updated + report.deleted;
      report.files.sort((a, b) => `${a.flowPath}/${a.path}`.localeCompare(`${b.flowPath}/${b.path}`));
      this.emit('synced', report);
      const left = Array.from(pagesOf(pendingNow(), plan), plansKey);
      if (left.length === 0) return { report, outcome: done };
      // What is left is either new (ids that went stale: go on) or what was just sent (back off, do not loop).
      const stalled = left.join() === sent.join();
      return { report, outcome: { kind: stalled ? 'stalled' : 'progress' } };
    } catch (error) {
      // An acknowledgement the state could not record leaves its files pending: sent again once it can.
      const fault = this.stateRefused(error);
      if (fault !== null) return { report, outcome: await this.storageOutcome(fault), error };
      const message = messageOf(error);
      state.recordSyncResult(this.repoId, message);
      return { report, outcome: failureOutcome(error, message), error };
    }
  }

  /**
   * How a round that sent all it could ends: 'recheck' while files are unreadable or flows wait out their own
   * back-off (the next look when the first is due), which never holds back a round that a change asks for.
   */
  private restingOutcome(unreadable: boolean): RoundOutcome {
    const retryInMs = this.retries.nextDueInMs();
    const settleInMs = this.settlingMs > 0 ? this.settlingMs : null;
    const dueInMs =
      retryInMs === null ? settleInMs : settleInMs === null ? retryInMs : Math.min(retryInMs, settleInMs);
    if (dueInMs !== null) return { kind: 'recheck', afterMs: dueInMs };
    return unreadable ? { kind: 'recheck' } : { kind: 'settled' };
  }

  /** After a round: the phase it leaves, and "back in sync" at the end of an outage. */
  private settled(outcome: RoundOutcome): void {
    if (outcome.kind === 'unreachable' || outcome.kind === 'refused') {
      const fault = outcome.phase === 'storage' ? outcome.fault : undefined;
      this.resting = { phase: outcome.phase, message: outcome.message, fault };
      this.setPhase(outcome.phase, outcome.message, fault);
      return;
    }
    if (this.phase === 'missing') return;
    if (this.paused) {
      this.resting = { phase: 'paused', message: null };
      this.setPhase('paused', null);
      return;
    }
    this.resting = { phase: 'idle', message: null };
    this.setPhase('idle', null);
    if ((outcome.kind === 'settled' || outcome.kind === 'recheck') && this.outage) {
      const recovery = { files: this.outage.files };
      this.outage = null;
      this.emit('recovered', recovery);
    }
  }

  /** A call that changes nothing: does the service answer at all? */
  private async probe(): Promise<boolean> {
    // Paused: the service is not asked; the round that follows sends nothing and settles `paused`.
    if (this.paused) return true;
    try {
      await checkAccess(this.options.client);
      return true;
    } catch (error) {
      return probeAnswered(error);
    }
  }

  /** `fault`: why the state cannot be written, with the 'storage' phase (a scan keeps the one before). */
  private setPhase(phase: SyncPhase, message: string | null, fault?: StorageFault): void {
    if (phase === 'offline' || phase === 'unauthorized' || phase === 'missing' || phase === 'storage')
      this.outage ??= { files: 0 };
    if (fault !== undefined) this.storageFault = fault;
    else if (phase !== 'storage' && phase !== 'scanning') this.storageFault = null;
    this.phase = phase;
    this.message = message;
    this.emit('status', this.status());
  }
}

/** "the data folder /home/me/.local/share/flowsync is full: 3001 changes waiting; free some space on its disk…" */
function storageMessage(fault: StorageFault, folder: string, waiting: number): string {
  return (
    `${describeStorageFault(fault, folder)}: ${waiting} ${waiting === 1 ? 'change' : 'changes'} waiting; ` +
    `${storageFaultRemedy(fault)}, and syncing goes on by itself`
  );
}

/** A file of the service as its user saw it listed: its version (hash) is what a deletion of it is based on. */
/** A file the service's copy was not written to, and why (a per-file line: the others went on). */
export interface NotWrittenFile {
  flowPath: string;
  path: string;
  reason: string;
}

export interface SeenFile {
  flowPath: string;
  path: string;
  hash: string;
}

/** The files listed now that its user saw (all of them when `seen` is absent), on the version seen. */
function onlySeen(listed: ListedServiceFile[], seen: readonly SeenFile[] | undefined): ListedServiceFile[] {
  if (seen === undefined) return listed;
  const hashes = new Map(seen.map((file) => [serviceFileKey(file.flowPath, file.path), file.hash]));
  return listed.flatMap((file) => {
    const hash = hashes.get(serviceFileKey(file.flowPath, file.path));
    return hash === undefined ? [] : [{ ...file, hash }];
  });
}

/**
 * Whether anything is at `path`: lstat, not exists, so a link of that name (even one to nowhere) counts; a path
 * that cannot be looked at (a file where a folder should be, no permission) counts too, as nothing is written there.
 */
function somethingAt(path: string): boolean {
  try {
    return lstatSync(path, { throwIfNoEntry: false }) !== undefined;
  } catch {
    return true;
  }
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/** The non-empty plans of `flows`, UPLOAD_PAGE flows at a time, each page planned only when it is reached. */
function* pagesOf(
  flows: readonly string[],
  plan: (page: readonly string[]) => FlowPlan[],
): Generator<FlowPlan[]> {
  for (let start = 0; start < flows.length; start += UPLOAD_PAGE) {
    const plans = plan(flows.slice(start, start + UPLOAD_PAGE));
    if (plans.length > 0) yield plans;
  }
}

function addTally(report: SyncReport, tally: UploadTally): void {
  report.rejected.push(...tally.rejected);
  report.conflicts.push(
    ...tally.conflicts.map(({ flowPath, path, writtenBy }) => ({ flowPath, path, writtenBy })),
  );
  report.files.push(...tally.files);
  report.flows += tally.flows;
  report.created += tally.created;
  report.updated += tally.updated;
  report.deleted += tally.deleted;
  report.requests += tally.requests;
}

function emptyReport(): SyncReport {
  return {
    files: [],
    conflicts: [],
    flows: 0,
    created: 0,
    updated: 0,
    deleted: 0,
    rejected: [],
    requests: 0,
    ms: 0,
  };
}

/** "2 files in conflict with the service's version: `flowsync conflicts` shows them" */
function conflictLine(count: number): string {
  return (
    `${count} ${count === 1 ? 'file is' : 'files are'} in conflict with the service's version (changed there since ` +
    'this checkout last synced it): `flowsync conflicts` shows them, `flowsync resolve` settles them'
  );
}

/** "159 deletions held: …" */
function heldLine(count: number): string {
  return (
    `${count} ${count === 1 ? 'deletion' : 'deletions'} held, more than this repository deletes without asking: ` +
    '`flowsync sync --yes` deletes them on the service, `flowsync resolve --held --theirs` puts them back on disk'
  );
}

/** "changed on the service by bob@laptop:~/app at 2026-…" */
function conflictMessage(conflict: FileConflict): string {
  const by = conflict.writtenBy ? ` by ${conflict.writtenBy}` : '';
  const at = conflict.writtenAt ? ` at ${conflict.writtenAt}` : '';
  const what = conflict.serviceHash === null ? 'deleted on the service' : 'changed on the service';
  return `${what}${by}${at} since this checkout last synced it`;
}

/**
 * No answer: probe until there is one. An answer that is not a success: back off. What the answer means is the
 * client's one reading of it (`failureKind`), not a second reading of status codes here.
 */
export function failureOutcome(error: unknown, message: string): RoundOutcome {
  const kind = failureKind(error);
  if (kind === 'unreachable') return { kind: 'unreachable', phase: 'offline', message };
  return { kind: 'refused', phase: kind === 'unauthorized' ? 'unauthorized' : 'offline', message };
}

/**
 * Whether a probe that failed still got an answer, by the same reading as a round's (`failureKind`). The probe
 * asked "not a TransportError" instead, so a 408 (a gateway whose upstream did not answer in time, 'unreachable'
 * to the client) counted as an answer: every probe then started a full round of uploads, which met the 408 again,
 * every 2-4 s for as long as it lasted, where the probe alone was meant to knock.
 */
export function probeAnswered(error: unknown): boolean {
  return failureKind(error) !== 'unreachable';
}
