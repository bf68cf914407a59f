import { EventEmitter } from 'node:events';
import { existsSync } from 'node:fs';
import { checkAccess } from '../client/index.ts';
import type { StorageFault } from '../host/index.ts';
import { folderGone } from '../protocol/index.ts';
import { Coalescer } from './coalescer.ts';
import { dryRun } from './dry-run.ts';
import type { EngineEvents, RepositorySpec, SyncEngineOptions } from './engine-options.ts';
import {
  afterRound,
  backToResting,
  composeStatus,
  conflictLine,
  countsUnrecorded,
  failureOutcome,
  gitChangesLine,
  heldLine,
  initialFacts,
  readOnlyLine,
  notInCheckoutLine,
  probeAnswered,
  restingOutcome,
  withPaused,
  withPhase,
  withSent,
  type StatusFacts,
  type SyncPhase,
} from './engine-status.ts';
import { FlowLayout } from './flow-layout.ts';
import { FreshLooks, notLooked, type FreshLook, type LastLook } from './fresh-look.ts';
import { FlowRetries } from './flow-retries.ts';
import { IgnoreRules } from './ignore-rules.ts';
import { Lookout, RESCAN_INTERVAL_MS, SERVICE_CHECK_MS } from './lookout.ts';
import { ToldLooks } from './told-looks.ts';
import { planUploads, plansKey, type PlanOptions } from './planner.ts';
import { PresenceCheck, nothingToSync } from './presence.ts';
import { Reconciler } from './reconciler.ts';
import { whoIsMe, type Me } from './reconcile.ts';
import {
  addTally,
  emptyReport,
  pagesOf,
  withConflictsFound,
  type PlannedFlow,
  type SyncReport,
  type SyncStatus,
} from './round-report.ts';
import { RootGuard } from './root-guard.ts';
import { DEFAULT_DELETION_GUARD, deletionVerdict, type DeletionState } from './safety.ts';
import { DEFAULT_TIMINGS, Scheduler, type RoundOutcome } from './scheduler.ts';
import { serviceFileKey } from './service-copy.ts';
import { ServiceRound } from './service-round.ts';
import { ServiceSide, type ServicePort } from './service-side.ts';
import type { FlowFile } from './state-deletions.ts';
import { StateFaults } from './state-faults.ts';
import { uploadPlans } from './uploader.ts';
import { FlowWatcher } from './watcher.ts';
import { GitMotions } from './git-motions.ts';
import type { GitChangeSet } from './state-motions.ts';

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
  /** What is asked of the service and written of its copy to disk: the window and the CLI call `engine.service`. */
  readonly service: ServiceSide;
  /** The round's negotiation with the service: bases, what a new state learns, the look at the service. */
  readonly round: ServiceRound;
  private readonly lookout: Lookout;
  /** The looks the live feed asks for: a teammate wrote these flows. */
  private readonly toldLooks: ToldLooks;
  /** Git's motions held for their user on a shared service. */
  readonly motions: GitMotions;
  /** Files the rescans found that the watcher had not reported. */
  /** New folders whose watch is in place, waiting for their rescan (one job for all of them). */
  private readonly retries: FlowRetries;
  /** What the status says: the phase, its message and what it rests on (engine-status.ts). */
  private facts: StatusFacts;
  /**
   * Files the state could not record (the data folder full or read-only), counted by a scan that writes nothing;
   * the rescan that is due from the failure on records them once it can.
   */
  private readonly faults: StateFaults;
  private stopped = false;
  /**
   * Deletions held at the last plan and the count seen waiting to stand still (safety.ts decides what each means);
   * the held set and its user's word are in the state (state.deletions), so that a restart keeps them.
   */
  private deletions: DeletionState = { held: 0, seen: null, waitingMs: 0 };
  /** Set while its user has the repository paused: rounds send nothing, the rest (watch, scan, count) goes on. */
  private paused: { since: string | null } | null;
  /** Whether the last round found changes here it does not send: the service's member for it only reads. */
  private readOnly = false;
  /** The looks at the service asked before "in sync" is said (lookNow). */
  private readonly looks: FreshLooks;

  constructor(private readonly options: SyncEngineOptions) {
    super();
    this.repo = options.repo;
    this.paused = options.paused ?? null;
    this.facts = initialFacts(this.paused !== null);
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
    this.motions = new GitMotions({
      state: options.state,
      repoId: this.repoId,
      layout: this.layout,
      setting: options.repo.gitChanges ?? 'ask',
      git: options.git,
      me: options.repo.writer,
      refresh: () => this.refresh(),
    });
    this.coalescer = new Coalescer(
      (paths) => {
        // When the burst was seen, not when the queue reached it: a round under way may take seconds.
        const seenAt = Date.now();
        this.inBackground(
          this.local(async () => {
            await this.reconciler.applyChanges(paths);
            await this.motions.look(paths, seenAt);
          }),
        );
      },
      options.quietMs ?? 30,
      options.maxWaitMs ?? 500,
    );
    this.watcher = new FlowWatcher(
      options.repo.root,
      rules,
      (path) => this.coalescer.add(path),
      (error) => {
        this.setPhase(this.facts.phase, `watching failed: ${error.message}`);
        this.inBackground(this.lookout.restartWatcher('watcher error'));
      },
      () => this.refresh(),
      options.watchBudget,
      (folder) => this.lookout.newFolder(folder),
    );
    this.presence = new PresenceCheck({
      repo: options.repo,
      layout: this.layout,
      rules,
      watcher: this.watcher,
      reconciler: this.reconciler,
      guard: this.guard,
      isMissing: () => this.facts.phase === 'missing',
      setMissing: (message) => this.setPhase('missing', message),
      changed: () => this.scheduler.want(),
      // Already in the scheduler's queue (the presence check is local work): rescanned here, not queued behind it.
      cameBack: async (roots) =>
        this.lookout.found(`${roots.join(', ')} came back`, await this.reconciler.rescan(roots)),
      heldChanged: () => this.refresh(),
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
        ended: (outcome) => this.roundEnded(outcome),
      },
      {
        retryBaseMs: options.retryBaseMs ?? DEFAULT_TIMINGS.retryBaseMs,
        retryMaxMs: options.retryMaxMs ?? DEFAULT_TIMINGS.retryMaxMs,
        probeMinMs: options.probeMinMs ?? DEFAULT_TIMINGS.probeMinMs,
        probeMaxMs: options.probeMaxMs ?? DEFAULT_TIMINGS.probeMaxMs,
      },
    );
    const port: ServicePort = {
      state: options.state,
      client: options.client,
      repoId: this.repoId,
      repo: this.repo,
      layout: this.layout,
      guard: this.guard,
      rules,
      scheduler: this.scheduler,
      refresh: () => this.refresh(),
      clearHeld: () => (this.deletions.held = 0),
      sendDeletions: (files) => this.sendHeldDeletions(files),
      sawWriters: (writers) => this.motions.noteWriters(writers),
    };
    this.round = new ServiceRound(port);
    this.service = new ServiceSide(port, this.round);
    this.faults = new StateFaults(
      options.state.folder,
      this.reconciler,
      () => options.state.counts(this.repoId).pending,
    );
    this.looks = new FreshLooks({
      last: () => this.lastLook(),
      look: (round) => this.round.check({ quick: true, round }),
    });
    this.lookout = new Lookout({
      reconciler: this.reconciler,
      presence: this.presence,
      roots: this.layout.roots,
      forgetWatched: (root) => this.watcher.forget(root),
      watcherIdle: () => this.coalescer.idle,
      local: (task, thenRound) => this.local(task, thenRound),
      inBackground: (work) => this.inBackground(work),
      checkQuietly: (quick) => this.checkQuietly(quick),
      live: () => options.live?.() ?? false,
      missed: (miss) => {
        this.emit('missed', miss);
        this.refresh();
      },
      rescanned: () => this.emit('rescanned'),
      presenceIntervalMs: options.presenceIntervalMs ?? 1000,
      rescanIntervalMs: options.rescanIntervalMs ?? RESCAN_INTERVAL_MS,
      serviceCheckIntervalMs: options.serviceCheckIntervalMs ?? SERVICE_CHECK_MS,
    });
    this.toldLooks = new ToldLooks({
      check: (told) => this.round.check({ quick: true, told }),
      canLook: () => !this.stopped && this.facts.phase === 'idle',
    });
  }

  /**
   * Whether its user paused it: what status().paused says, without the rest of the status (its problems are looked
   * for on disk and in the state), which the agent's check of the config files each second computed for this alone.
   */
  get isPaused(): boolean {
    return this.paused !== null;
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
    const unrecorded = countsUnrecorded(this.facts) ? this.faults.files : 0;
    const counts = () => {
      const counts = state.counts(repoId);
      return { ...counts, pending: counts.pending + unrecorded };
    };
    const shown = composeStatus(this.facts, {
      held: [...this.guard.held.values()],
      folder: state.folder,
      pending: () => counts().pending,
      standing: () => this.standingProblems(),
    });
    const motions = this.motions;
    return {
      phase: shown.phase,
      get counts() {
        return counts();
      },
      get gitChanges() {
        return motions.changeSets().filter((set) => set.decision === 'held');
      },
      message: shown.message,
      retryAt: this.scheduler.retryAt,
      missed: this.lookout.missed,
      heldDeletions: this.deletions.held,
      notInCheckout: this.round.notInCheckout,
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
    this.update(withPaused(this.facts, true));
  }

  /** Sends what waited while paused, now. */
  resume(): Promise<void> {
    if (!this.paused) return Promise.resolve();
    this.paused = null;
    this.update(withPaused(this.facts, false));
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
    const newer = this.service.newerLine();
    const wentBack = this.service.wentBackLine();
    return [
      ...(nothing !== null ? [nothing] : []),
      ...(wentBack !== null ? [wentBack] : []),
      ...(conflicts > 0 ? [conflictLine(conflicts)] : []),
      ...(newer !== null ? [newer] : []),
      ...(this.deletions.held > 0 ? [heldLine(this.deletions.held)] : []),
      ...(this.readOnly ? [readOnlyLine(this.options.state.counts(this.repoId).pending)] : []),
      ...(this.round.notInCheckout > 0 ? [notInCheckoutLine(this.round.notInCheckout)] : []),
      ...this.motions
        .changeSets()
        .filter((set) => set.decision === 'held')
        .map((set) => gitChangesLine(set, this.motions.teammates)),
      ...this.reconciler.refusedRoots.values(),
      ...this.watcher.refused.values(),
      ...this.rules.problems.values(),
      ...this.retries.messages(),
    ];
  }

  /** The last look at the service that went through, and whether a live feed says everything as it happens. */
  lastLook(): LastLook {
    // Live: the feed tells every write on the service now, and what it told is looked at already.
    return { at: this.round.lookedAt, live: (this.options.live?.() ?? false) && this.toldLooks.caughtUp };
  }

  /**
   * A look at the service now, before "in sync" is said (`status`, the stop line): the quick check, unless the last
   * look is fresh (needsFreshLook); resolves when it is done, or after `waitMs` whatever it does. Only at rest, as
   * the periodic look (scanning or sending is never "in sync" either), and not while paused (the service is not
   * asked) or stopped; nor before a state that synced nothing learned the service in its first round (as beforeRun):
   * compared before, every file there would count as not in this checkout. `oneShot`: an engine opened for one
   * command (`status` with no agent running): no round follows the look.
   */
  lookNow({ waitMs, oneShot = false }: { waitMs?: number; oneShot?: boolean } = {}): Promise<FreshLook> {
    const atRest = this.facts.phase === 'idle' && !this.stopped && !this.paused;
    const learned = () => this.round.lookedAt !== null || this.options.state.hasAcknowledged(this.repoId);
    if (!atRest || !learned()) return Promise.resolve(notLooked(this.lastLook()));
    return this.looks.now({ ...(waitMs !== undefined && { waitMs }), round: !oneShot });
  }

  /** Scans, sends what differs, then keeps watching. Resolves once watching, even if it went offline. */
  async start(): Promise<void> {
    await this.initialSync({ watchFirst: true });
    await this.watch();
  }

  /**
   * The first scan and round of uploads. With `watchFirst` (`flowsync start`), watching starts before the scan: the
   * scan sees what happened before the watcher was ready, the watcher everything after, and `watch()` need not
   * scan again (one scan of 100,000 files fewer). Scanning a repository synced before first, to be in sync before
   * chokidar's walk, then again once watching, took 8.7 s from restart to watching; chokidar lists folders only
   * (0.6 s at 100,000 files: watcher.ts), so one scan after it is sooner for both.
   */
  async initialSync({ watchFirst = false } = {}): Promise<void> {
    this.presence.remember();
    if (watchFirst) await this.presence.watchPresentRoots();
    // A state that cannot be written now is a state of the engine, not a failed start: the round retries.
    await this.local(() => this.reconciler.rescan(), false).catch((error: unknown) => {
      if (this.faults.refused(error) === null) throw error;
    });
    await this.sync();
    await this.checkQuietly();
  }

  /**
   * The service checked against the state (checkService) where it can be; a failure (offline, a gateway) waits for
   * the next check, at the next periodic rescan.
   */
  private async checkQuietly(quick = false): Promise<void> {
    // Only after a round that went through: a service failing or out of reach is not asked once more for this.
    if (this.stopped || this.facts.phase !== 'idle') return;
    await this.round.check({ quick }).catch(() => 0);
  }

  /**
   * The live feed: these flows were written on the service (each with its aggregate there now, null: no files),
   * compared with what this checkout acknowledged as soon as the engine rests. Resolves once looked at (or kept).
   */
  serviceChanged(flows: Iterable<readonly [string, string | null]>): Promise<void> {
    return this.toldLooks.told(flows);
  }

  /** The live feed cannot say what changed (its first answer, a gap): every flow's aggregate compared once. */
  serviceUnknown(): Promise<void> {
    return this.checkQuietly(true);
  }

  /**
   * Starts watching, then looks once more at the roots not watched before the first scan, for what changed
   * while the watcher was being set up (seconds, for a very large repository), so nothing done meanwhile is missed.
   */
  async watch(): Promise<void> {
    const fresh = await this.presence.watchPresentRoots();
    if (fresh.length > 0) await this.local(() => this.reconciler.rescan(fresh));
    this.lookout.start();
  }

  /** One scan and one round of uploads, without watching: `flowsync sync`. Throws when the service is unreachable. */
  async syncOnce(): Promise<SyncReport> {
    const ran: { round?: Awaited<ReturnType<SyncEngine['uploadRound']>> } = {};
    const known = await this.round.beforeRun();
    await this.scheduler.run(async () => {
      await this.reconciler.rescan();
      ran.round = await this.uploadRound();
    });
    if (!ran.round) return emptyReport(); // stopped before it ran
    if (ran.round.error !== undefined) throw ran.round.error;
    // What the look before found is this run's news as much as a refusal would have been.
    withConflictsFound(ran.round.report, this.options.state.conflicts(this.repoId), known);
    this.roundEnded(ran.round.outcome);
    await this.checkQuietly();
    return ran.round.report;
  }

  /**
   * What a round would send now, flow by flow, and nothing sent: a rescan, then the same planner a round uses
   * (`flowsync sync --dry-run`). The rescan records what it finds in the state this engine was given, so a dry run
   * gives it a copy.
   */
  async plan(): Promise<PlannedFlow[]> {
    await this.scheduler.run(async () => {
      await this.reconciler.rescan();
    });
    await this.round.beforeRun();
    this.guard.checkAll();
    const options = await this.planOptions();
    const { state } = this.options;
    return dryRun({
      state,
      repoId: this.repoId,
      guard: this.guard,
      options,
      heldDeletions: this.deletions.held,
    });
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
   * Its user said the deletions waiting may go (`flowsync sync --yes`, "Delete them on the service"), every one of
   * them or these files: confirmed in the state, they go in each round, whatever the guard, until the service took
   * them. A deletion made after this is a new question. Returns the files confirmed.
   */
  confirmDeletions(files?: readonly FlowFile[]): FlowFile[] {
    return this.options.state.deletions.confirm(this.repoId, files);
  }

  /**
   * Sends the deletions waiting now ("Delete them on the service", `resolve --held --mine`), or these files, and
   * returns how many the service took (not how many stopped waiting: a conflict is not a deletion sent). A conflict
   * the service finds refuses its flow whole, and the planner leaves it out of the round after: a round more while
   * confirmed deletions still wait and the last round sent some of them.
   */
  async sendHeldDeletions(files?: readonly FlowFile[]): Promise<number> {
    const { deletions } = this.options.state;
    const confirmed = this.confirmDeletions(files);
    const stillWaiting = () => deletions.confirmed(this.repoId).length;
    let left = stillWaiting();
    for (let rounds = 0; rounds < 3 && left > 0; rounds++) {
      await this.sync();
      const now = stillWaiting();
      const progressed = now < left;
      left = now;
      if (!progressed) break;
    }
    return deletions.taken(this.repoId, confirmed);
  }

  /**
   * Its user's word on git's change sets held (`sync --yes`, "Send to the team"): they go in the rounds that follow
   * (their deletions confirmed too, whatever the guard), as held deletions do. `name`: that set only (the window's
   * card), else every one. Returns the sets sent.
   */
  async sendGitChanges(name: string | null = null): Promise<GitChangeSet[]> {
    const sets = this.confirmGitChanges(name);
    if (sets.length === 0) return [];
    for (let rounds = 0; rounds < 3; rounds++) {
      await this.sync();
      if (this.motions.changeSets().every((set) => set.decision !== 'confirmed')) break;
    }
    return sets;
  }

  /**
   * Its user's word on git's change sets held, without a round (`flowsync sync --yes` runs its own): confirmed in
   * the state, their deletions too, so that the guard does not hold them again. Returns the sets confirmed.
   */
  confirmGitChanges(name: string | null = null): GitChangeSet[] {
    const files = this.options.state.gitHeld.decide(this.repoId, 'confirmed', name);
    const deleted = files.filter((file) => file.hash === null);
    if (deleted.length > 0) this.options.state.deletions.confirm(this.repoId, deleted);
    return this.motions.setsOf(files);
  }

  /** Its user keeps git's change set `name` (null: every one) here: not sent while as git left it, not asked again. */
  keepGitChanges(name: string | null = null): GitChangeSet[] {
    return this.motions.decide('kept', name);
  }

  /** Where a file of this repository (its path relative to the root) sits among the flows; null: in none. */
  locate(repoPath: string): { flowPath: string; path: string } | null {
    return this.layout.locate(repoPath);
  }

  /**
   * How the next round plans: with bases when the service takes them (asked once; a "no" asked again after a
   * minute, and a "no" from a service that said yes before is a failure, not a reason to send without them), and
   * with deletions held when there are more than the guard lets through. Throws what asking the service threw.
   */
  private async planOptions(): Promise<PlanOptions & { bases: boolean; holdDeletions: boolean }> {
    const { state } = this.options;
    const waiting = state.deletions.look(this.repoId);
    const decided = deletionVerdict({
      ...waiting,
      acknowledged: state.acknowledgedCount(this.repoId),
      guard: this.repo.deletionGuard === undefined ? DEFAULT_DELETION_GUARD : this.repo.deletionGuard,
      watching: this.lookout.watching,
      seen: this.deletions.seen,
      now: Date.now(),
    });
    this.deletions.seen = decided.seen;
    const held = decided.verdict === 'hold' ? decided.held : 0;
    if (held > 0) state.deletions.hold(this.repoId);
    this.deletions.waitingMs = decided.verdict === 'wait' ? decided.waitMs : 0;
    if (held !== this.deletions.held) {
      this.deletions.held = held;
      this.refresh();
    }
    const confirmed =
      waiting.confirmed > 0
        ? new Set(state.deletions.confirmed(this.repoId).map((f) => serviceFileKey(f.flowPath, f.path)))
        : undefined;
    const bases = await this.round.takesBases();
    if (bases) {
      await this.round.learnService();
      await this.round.answerUnanswered();
    }
    return { bases, holdDeletions: decided.verdict !== 'send', ...(confirmed && { confirmed }) };
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.reconciler.stopped = true;
    this.coalescer.clear();
    this.lookout.stop();
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
      const fault = this.faults.refused(error);
      if (fault === null) return this.setPhase(this.facts.phase, messageOf(error));
      await this.faults.count();
      if (!this.stopped) this.setPhase('storage', null, fault);
    });
  }

  /** A round that threw: the state could not be written (wait, keep the work), or a failure of the service. */
  private async failedRound(error: unknown): Promise<RoundOutcome> {
    const fault = this.faults.refused(error);
    return fault === null
      ? failureOutcome(error, messageOf(error), this.options.serviceKey)
      : this.faults.outcome(fault);
  }

  /** Local work goes through the scheduler's queue; after it, a round (unless told otherwise). */
  private async local(task: () => Promise<unknown>, thenRound = true): Promise<void> {
    try {
      await this.scheduler.run(async () => {
        await task();
        // A scan while a retry is waited for: back to what the last round said, until the retry.
        if (this.facts.phase === 'scanning' && this.scheduler.retryAt !== null)
          this.update(backToResting(this.facts));
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
    this.deletions.waitingMs = 0;
    if (this.reconciler.fullRescanDue) {
      this.reconciler.fullRescanDue = false;
      await this.reconciler.rescan().catch((error: unknown) => {
        this.reconciler.fullRescanDue = true; // still due: the failed round backs off and tries again
        throw error;
      });
      this.faults.recorded(); // every file of it
    }
    // Paused: what the scans recorded stays pending, counted, until its user resumes.
    if (this.paused) return { report, outcome: { kind: 'done' } };
    if (!existsSync(this.repo.root)) {
      this.setPhase('missing', folderGone(this.repo.root));
      return { report, outcome: { kind: 'done' } };
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
    if (this.guard.held.size !== wasHeld) this.refresh();
    // A conflict its user settled on disk (made the file what the service has) is settled; a file newer there that
    // the disk now has (a pull) is no longer newer: said, as the count it changes is.
    if (state.settleConflictsMatchingDisk(this.repoId).length > 0) this.refresh();
    state.forgetGoneRejections(this.repoId);
    const pending = pendingNow();
    // A read-only member's checkout is receive-only: it looks and tells, never sends; its edits are said.
    this.readOnly = pending.length > 0 && (await this.repo.member?.())?.readOnly === true;
    if (this.readOnly) return { report, outcome: { kind: 'done' } };
    const sent: string[] = [];
    let flowsDone = 0;
    let me: Me | undefined;
    try {
      // Asking the service how to plan (bases, what a lost answer stored) is the round's first call: syncing.
      // (Not out of `storage`: its message says what waits, until a write goes through.)
      if (pending.length > 0 && this.facts.phase !== 'storage') this.setPhase('syncing', null);
      const options = pending.length > 0 || this.deletions.held > 0 ? await this.planOptions() : {};
      // Nothing pending: no deletion waits for its count to stand still either (they came back: a stash and its pop).
      if (!('holdDeletions' in options)) this.deletions.seen = null;
      const plan = (flows: readonly string[]) => planUploads(state, this.repoId, flows, options).plans;
      for (const plans of pagesOf(pending, plan)) {
        // Stopping: the pages not sent yet stay pending, for the next start; the one in flight is in `in_flight`.
        // Stopping, or paused by its user meanwhile: the pages not sent yet stay pending.
        if (this.stopped || this.paused) return { report, outcome: { kind: 'done' } };
        sent.push(plansKey(plans));
        if (sent.length === 1 && this.facts.phase !== 'syncing') this.setPhase('syncing', null);
        // Who this checkout is, known before anything is sent: a refused write is judged its own by its member too.
        me ??= await whoIsMe(this.repo);
        const tally = await uploadPlans(
          {
            client,
            hasher,
            target: this.repo,
            layout: this.layout,
            state,
            repoId: this.repoId,
            retries: this.retries,
            me,
          },
          plans,
          (done) =>
            this.emit('progress', { stage: 'uploading', done: flowsDone + done, total: pending.length }),
        );
        flowsDone += plans.length;
        addTally(report, tally);
        // Who else wrote the files refused: another's name makes the repository shared (git's motions held).
        this.motions.noteWriters(tally.conflicts.map((conflict) => conflict.writtenBy));
      }
      const done = restingOutcome({
        retryInMs: this.retries.nextDueInMs(),
        waitingMs: this.deletions.waitingMs,
        unreadable,
      });
      if (sent.length === 0) return { report, outcome: done };
      report.ms = Math.round(performance.now() - started);
      state.recordSyncResult(this.repoId, null);
      this.facts = withSent(this.facts, report.created + report.updated + report.deleted);
      report.files.sort((a, b) => `${a.flowPath}/${a.path}`.localeCompare(`${b.flowPath}/${b.path}`));
      this.emit('synced', report);
      const left = Array.from(pagesOf(pendingNow(), plan), plansKey);
      if (left.length === 0) return { report, outcome: done };
      // What is left is either new (ids that went stale: go on) or what was just sent (back off, do not loop).
      const stalled = left.join() === sent.join();
      return { report, outcome: { kind: stalled ? 'stalled' : 'progress' } };
    } catch (error) {
      // An acknowledgement the state could not record leaves its files pending: sent again once it can.
      const fault = this.faults.refused(error);
      if (fault !== null) return { report, outcome: await this.faults.outcome(fault), error };
      const message = messageOf(error);
      state.recordSyncResult(this.repoId, message);
      return { report, outcome: failureOutcome(error, message, this.options.serviceKey), error };
    }
  }

  /** After a round: the phase it leaves, and "back in sync" at the end of an outage. */
  private roundEnded(outcome: RoundOutcome): void {
    const after = afterRound(this.facts, outcome, this.paused !== null);
    if (!after.changed) return;
    this.update(after.facts);
    if (after.recovered) this.emit('recovered', after.recovered);
  }

  /** A call that changes nothing: does the service answer at all? */
  private async probe(): Promise<boolean> {
    // Paused: the service is not asked; the round that follows sends nothing and ends in `paused`.
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
    this.update(withPhase(this.facts, phase, message, fault));
  }

  /** The status's facts changed: kept, and said. */
  private update(facts: StatusFacts): void {
    this.facts = facts;
    if (facts.phase === 'idle') this.toldLooks?.resting();
    this.emit('status', this.status());
  }

  /** Something the status shows besides its facts changed (counts, held roots, problems): said again. */
  private refresh(): void {
    this.emit('status', this.status());
  }
}

/** "the data folder /home/me/.local/share/flowsync is full: 3001 changes waiting; free some space on its disk…" */
function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
