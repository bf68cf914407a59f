import { EventEmitter } from 'node:events';
import { existsSync, statSync } from 'node:fs';
import { lstat } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { RemoteError, type RemoteClient } from '../client/index.ts';
import { describeFileWarning } from '../protocol/index.ts';
import { Coalescer } from './coalescer.ts';
import { kindOf, notRealFolder, warningOf } from './contained-fs.mjs';
import { FlowLayout } from './flow-layout.ts';
import type { Hasher } from './hasher.ts';
import { IgnoreRules } from './ignore-rules.ts';
import { planUploads } from './planner.ts';
import { placeOf, scanFlows, type RefusedEntry, type ScannedFile } from './scanner.ts';
import type { FileRecord, RepoCounts, SyncState } from './state.ts';
import { uploadPlans } from './uploader.ts';
import { FlowWatcher } from './watcher.ts';

export interface RepositorySpec {
  root: string;
  owner: string;
  name: string;
  /** Folders (relative to the root) whose subfolders are flows; default `flows`. */
  flowRoots: readonly string[];
}

export type SyncPhase = 'scanning' | 'syncing' | 'idle' | 'offline' | 'unauthorized' | 'missing' | 'stopped';

export interface SyncStatus {
  phase: SyncPhase;
  counts: RepoCounts;
  /** Why the engine is offline, unauthorized or missing; null otherwise. */
  message: string | null;
  /** When the next attempt is due, while offline. */
  retryAt: number | null;
}

export interface SyncProgress {
  stage: 'hashing' | 'uploading';
  done: number;
  total: number;
}

/** One round of uploads, for the line `flowsync start` prints. */
export interface SyncReport {
  flows: number;
  created: number;
  updated: number;
  deleted: number;
  rejected: { flowPath: string; message: string }[];
  requests: number;
  ms: number;
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
  /** Back-off after a failed upload: doubled per failure from `retryBaseMs`, at most `retryMaxMs`, with jitter. */
  retryBaseMs?: number;
  retryMaxMs?: number;
  /** How often to look for flow roots that appeared and for the repository folder itself. */
  presenceIntervalMs?: number;
}

interface EngineEvents {
  status: [SyncStatus];
  progress: [SyncProgress];
  synced: [SyncReport];
}

/**
 * Keeps one repository's flows in sync: scan and hash, plan what differs from what the service acknowledged,
 * upload, acknowledge; then watch and do the same for each burst of changes. Failures to reach the service back
 * off and retry; nothing pending is lost because the state is the outbox.
 */
export class SyncEngine extends EventEmitter<EngineEvents> {
  readonly repoId: number;
  private readonly repo: RepositorySpec;
  private readonly layout: FlowLayout;
  private readonly rules: IgnoreRules;
  private readonly watcher: FlowWatcher;
  private readonly coalescer: Coalescer;
  private phase: SyncPhase = 'idle';
  private message: string | null = null;
  private retryAt: number | null = null;
  private retryTimer: NodeJS.Timeout | null = null;
  private presenceTimer: NodeJS.Timeout | null = null;
  private failures = 0;
  private running: Promise<void> | null = null;
  private again = false;
  private fullRescanDue = false;
  /** mtimes of the .gitignore files above the flow roots, which the watcher does not see. */
  private outerIgnoreFiles = '';
  private stopped = false;
  private work: Promise<void> = Promise.resolve();
  /** Flow roots that are links (or below one): refused, with the message that names them. */
  private readonly refusedRoots = new Map<string, string>();

  constructor(private readonly options: SyncEngineOptions) {
    super();
    this.repo = options.repo;
    this.layout = new FlowLayout(options.repo.flowRoots);
    this.rules = new IgnoreRules(options.repo.root);
    this.repoId = options.state.ensureRepo(
      options.repo.root,
      options.serviceKey,
      options.repo.owner,
      options.repo.name,
    );
    this.coalescer = new Coalescer(
      (paths) => this.enqueue(() => this.applyChanges(paths)),
      options.quietMs ?? 30,
      options.maxWaitMs ?? 500,
    );
    this.watcher = new FlowWatcher(
      options.repo.root,
      this.rules,
      (path) => this.coalescer.add(path),
      (error) => this.setPhase(this.phase, `watching failed: ${error.message}`),
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
    return {
      phase: this.phase,
      get counts() {
        return state.counts(repoId);
      },
      message: this.message ?? ([...this.refusedRoots.values()].join('; ') || null),
      retryAt: this.retryAt,
    };
  }

  /** Scans, sends what differs, then keeps watching. Resolves once watching, even if it went offline. */
  async start(): Promise<void> {
    await this.initialSync();
    await this.watch();
  }

  /** The first scan and round of uploads. */
  async initialSync(): Promise<void> {
    this.outerIgnoreFiles = this.outerIgnoreSignature();
    await this.enqueue(() => this.rescan());
    await this.sync();
  }

  /**
   * Starts watching, then looks once more at what changed while the watcher was being set up (seconds, for a
   * very large repository), so nothing done meanwhile is missed.
   */
  async watch(): Promise<void> {
    await this.watchPresentRoots();
    await this.enqueue(() => this.rescan());
    void this.sync();
    const interval = this.options.presenceIntervalMs ?? 1000;
    this.presenceTimer = setInterval(() => void this.enqueue(() => this.checkPresence()), interval);
    this.presenceTimer.unref();
  }

  /** One scan and one round of uploads, without watching: `flowsync sync`. Throws when the service is unreachable. */
  async syncOnce(): Promise<SyncReport> {
    await this.rescan();
    return this.uploadRound(true);
  }

  /** Asks for a round now (a change, "sync now", or the network coming back). */
  sync(): Promise<void> {
    if (this.stopped) return Promise.resolve();
    if (this.running) {
      this.again = true;
      return this.running;
    }
    this.running = (async () => {
      try {
        do {
          this.again = false;
          await this.uploadRound(false);
        } while (this.again && !this.stopped);
      } finally {
        this.running = null;
      }
    })();
    return this.running;
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.coalescer.clear();
    if (this.retryTimer) clearTimeout(this.retryTimer);
    if (this.presenceTimer) clearInterval(this.presenceTimer);
    await this.watcher.close();
    await this.running?.catch(() => {});
    await this.work.catch(() => {});
    this.setPhase('stopped', null);
  }

  /** Local work (scans, change handling) runs one piece at a time, in order. */
  private enqueue(task: () => Promise<void>): Promise<void> {
    const next = this.work.then(task, task);
    this.work = next.catch(() => {});
    return next;
  }

  private async uploadRound(throwOnFailure: boolean): Promise<SyncReport> {
    const report: SyncReport = {
      flows: 0,
      created: 0,
      updated: 0,
      deleted: 0,
      rejected: [],
      requests: 0,
      ms: 0,
    };
    const started = performance.now();
    await this.work;
    if (this.fullRescanDue) {
      this.fullRescanDue = false;
      await this.enqueue(() => this.rescan());
    }
    if (!existsSync(this.repo.root)) {
      this.setPhase('missing', `${this.repo.root} is gone; syncing resumes when it is back`);
      return report;
    }
    const { state } = this.options;
    const { plans } = planUploads(state, this.repoId);
    if (plans.length === 0) {
      if (this.phase !== 'offline' || this.failures === 0) this.setPhase('idle', null);
      return report;
    }
    this.setPhase('syncing', null);
    try {
      const result = await uploadPlans(this.options.client, this.options.hasher, this.repo, plans, (done) =>
        this.emit('progress', { stage: 'uploading', done, total: plans.length }),
      );
      state.acknowledge(this.repoId, result.acks);
      for (const stale of result.staleFileIds) {
        state.acknowledge(this.repoId, [{ flowPath: stale.flowPath, stored: [], dropped: [stale.path] }]);
      }
      for (const { plan } of result.acks.map((ack) => ({ plan: ack.flowPath })))
        state.clearRejection(this.repoId, plan);
      for (const { plan, message } of result.rejected) {
        state.reject(this.repoId, plan.flowPath, message, plan.signature);
        report.rejected.push({ flowPath: plan.flowPath, message });
      }
      Object.assign(report, {
        flows: result.flows,
        created: result.created,
        updated: result.updated,
        deleted: result.deleted,
        requests: result.requests,
        ms: Math.round(performance.now() - started),
      });
      state.recordSyncResult(this.repoId, null);
      this.failures = 0;
      this.retryAt = null;
      this.setPhase('idle', null);
      this.emit('synced', report);
      // What changed during the upload, or ids that went stale, is sent in the next round.
      if (state.pendingFlows(this.repoId).length > report.rejected.length) this.again = true;
      return report;
    } catch (error) {
      if (throwOnFailure) throw error;
      this.scheduleRetry(error);
      return report;
    }
  }

  private scheduleRetry(error: unknown): void {
    const unauthorized =
      error instanceof RemoteError && (error.statusCode === 401 || error.statusCode === 403);
    const message = error instanceof Error ? error.message : String(error);
    this.options.state.recordSyncResult(this.repoId, message);
    this.failures++;
    const base = this.options.retryBaseMs ?? 1000;
    const ceiling = Math.min(this.options.retryMaxMs ?? 60_000, base * 2 ** (this.failures - 1));
    const delay = ceiling / 2 + Math.random() * (ceiling / 2);
    this.retryAt = Date.now() + delay;
    this.setPhase(unauthorized ? 'unauthorized' : 'offline', message);
    if (this.retryTimer) clearTimeout(this.retryTimer);
    this.retryTimer = setTimeout(() => void this.sync(), delay);
    this.retryTimer.unref();
  }

  private setPhase(phase: SyncPhase, message: string | null): void {
    this.phase = phase;
    this.message = message;
    this.emit('status', this.status());
  }

  /** Brings the state in line with the disk below `under` (default: all flow roots). */
  private async rescan(under: readonly string[] = this.layout.roots): Promise<void> {
    if (!existsSync(this.repo.root)) return;
    this.setPhase('scanning', null);
    const { files: scanned, refused } = await scanFlows(this.repo.root, this.layout, this.rules, under);
    this.noteRefusedRoots(under, refused);
    const { state } = this.options;
    // Only what is below the rescanned folders: a new flow folder must not load a 100,000-file repository.
    const records =
      under === this.layout.roots
        ? state.files(this.repoId)
        : under.flatMap((f) => state.filesUnder(this.repoId, f));
    const known = new Map(records.map((file) => [`${file.flowPath}/${file.path}`, file]));
    const seen = new Set(refused.map((entry) => `${entry.flowPath}/${entry.path}`));
    const toHash: ScannedFile[] = [];
    for (const file of scanned) {
      const key = `${file.flowPath}/${file.path}`;
      seen.add(key);
      const record = known.get(key);
      if (!isUnchanged(record, file)) toHash.push(file);
    }
    const gone = [...known.values()].filter(
      (file) =>
        file.localHash !== null &&
        !seen.has(`${file.flowPath}/${file.path}`) &&
        under.some((folder) => `${file.flowPath}/${file.path}`.startsWith(`${folder}/`)),
    );
    state.markGone(this.repoId, gone);
    this.saveRefused(refused);
    await this.hashAndSave(toHash);
  }

  /** Links, FIFOs, sockets and devices are kept as files not sent, each with its reason. */
  private saveRefused(refused: RefusedEntry[]): void {
    this.options.state.saveLocal(
      this.repoId,
      refused.map((entry) => ({ ...entry, size: 0, mtimeMs: 0, localHash: '' })),
    );
  }

  /** Remembers which of the flow roots just looked at are links, for the status message that names them. */
  private noteRefusedRoots(under: readonly string[], refused: RefusedEntry[]): void {
    for (const root of under) this.refusedRoots.delete(root);
    for (const entry of refused) {
      if (entry.path !== '' || !this.layout.roots.includes(entry.flowPath)) continue;
      const root = entry.flowPath;
      const link = notRealFolder(this.repo.root, root)?.path ?? root;
      const what = describeFileWarning(entry.warning);
      this.refusedRoots.set(
        root,
        link === root
          ? `the flow folder ${root} is ${what}, nothing under it is synced`
          : `the flow folder ${root} is below ${link}, ${what}, nothing under it is synced`,
      );
    }
  }

  private async hashAndSave(files: ScannedFile[]): Promise<void> {
    const { state, hasher } = this.options;
    const unsafe: ScannedFile[] = [];
    const safe: ScannedFile[] = [];
    for (const file of files) (FlowLayout.unsafeReason(file) === null ? safe : unsafe).push(file);
    state.saveLocal(
      this.repoId,
      unsafe.map((file) => ({ ...file, localHash: '', warning: 'unsafe-path' })),
    );
    const CHUNK = 512;
    for (let start = 0; start < safe.length; start += CHUNK) {
      const chunk = safe.slice(start, start + CHUNK);
      const results = await hasher.hash(
        this.repo.root,
        chunk.map((file) => `${file.flowPath}/${file.path}`),
      );
      const present = [];
      const missing = [];
      for (const [index, result] of results.entries()) {
        const file = chunk[index]!;
        if (result.missing) missing.push(file);
        else present.push({ ...file, size: result.size, localHash: result.hash, warning: result.warning });
      }
      state.saveLocal(this.repoId, present);
      state.markGone(this.repoId, missing);
      this.emit('progress', {
        stage: 'hashing',
        done: Math.min(safe.length, start + CHUNK),
        total: safe.length,
      });
    }
  }

  /** Handles a burst of watcher events: each path is looked at as it is now. */
  private async applyChanges(paths: Set<string>): Promise<void> {
    if (this.stopped) return;
    if (!existsSync(this.repo.root)) {
      this.setPhase('missing', `${this.repo.root} is gone; syncing resumes when it is back`);
      return;
    }
    const files: ScannedFile[] = [];
    const folders: string[] = [];
    const gone: { flowPath: string; path: string }[] = [];
    const refused: RefusedEntry[] = [];
    // Folders found real on the way to this burst's paths (containment: no link on the way is followed).
    const known = new Set<string>();
    for (const path of paths) {
      if (path.endsWith('.gitignore')) {
        this.rules.forget(dirname(path) === '.' ? '' : dirname(path));
        this.fullRescanDue = true;
        continue;
      }
      // Below a link (or a FIFO...) the path is not in the repository: what was there is gone.
      const slash = path.lastIndexOf('/');
      const outside = slash > 0 ? notRealFolder(this.repo.root, path.slice(0, slash), known) : null;
      const stat = outside ? null : await lstat(join(this.repo.root, path)).catch(() => null);
      const kind = stat ? kindOf(stat) : 'missing';
      const location = this.layout.locate(path);
      if (stat && kind === 'file') {
        if (location && !this.rules.ignores(path))
          files.push({ ...location, size: stat.size, mtimeMs: stat.mtimeMs });
      } else if (kind === 'folder') {
        if (!this.rules.ignores(`${path}/`)) folders.push(path);
      } else {
        if (location) gone.push(location);
        this.options.state.markGoneUnder(this.repoId, path);
        const warning = warningOf(kind);
        const place = placeOf(this.layout, path);
        if (warning && place && !this.rules.ignores(path) && !this.rules.ignores(`${path}/`))
          refused.push({ ...place, warning });
        if (this.layout.roots.includes(path)) {
          this.noteRefusedRoots([path], refused);
          this.watcher.forget(path);
        }
      }
    }
    this.options.state.markGone(this.repoId, gone);
    this.saveRefused(refused);
    await this.hashAndSave(files);
    if (folders.length > 0) await this.rescan(folders);
    void this.sync();
  }

  /** The repository's own .gitignore and those of the folders above each flow root (`apps/` for `apps/flows`). */
  private outerIgnoreSignature(): string {
    const folders = new Set(['']);
    for (const root of this.layout.roots) {
      const segments = root.split('/');
      for (let depth = 1; depth < segments.length; depth++) folders.add(segments.slice(0, depth).join('/'));
    }
    return [...folders].map((folder) => statSignature(join(this.repo.root, folder, '.gitignore'))).join('|');
  }

  /** Flow roots that are real folders are watched; one that is a link (or below one) never is. */
  private async watchPresentRoots(): Promise<void> {
    const present = this.layout.roots.filter((root) => notRealFolder(this.repo.root, root) === null);
    await this.watcher.add(present);
  }

  /** Flow roots that appeared (or vanished) and the repository folder itself, looked at every second. */
  private async checkPresence(): Promise<void> {
    if (this.stopped) return;
    if (!existsSync(this.repo.root)) {
      if (this.phase !== 'missing')
        this.setPhase('missing', `${this.repo.root} is gone; syncing resumes when it is back`);
      return;
    }
    if (this.phase === 'missing') {
      for (const root of this.layout.roots) this.watcher.forget(root);
      await this.rescan();
      await this.watchPresentRoots();
      void this.sync();
      return;
    }
    const outer = this.outerIgnoreSignature();
    if (outer !== this.outerIgnoreFiles) {
      this.outerIgnoreFiles = outer;
      this.rules.forgetAll();
      await this.rescan();
      void this.sync();
    }
    const present: string[] = [];
    const linked: string[] = [];
    for (const root of this.layout.roots) {
      const outside = notRealFolder(this.repo.root, root);
      if (outside === null) {
        present.push(root);
        continue;
      }
      this.watcher.forget(root); // watched again, and scanned whole, when it comes back
      // Swapped for a link: scanned once, so that what was below it leaves and the link is reported.
      if (warningOf(outside.kind) && !this.refusedRoots.has(root)) linked.push(root);
    }
    if (linked.length > 0) {
      await this.rescan(linked);
      void this.sync();
    }
    const appeared = await this.watcher.add(present);
    if (appeared.length > 0) {
      await this.rescan(appeared);
      void this.sync();
    }
  }
}

function statSignature(path: string): string {
  const stat = statSync(path, { throwIfNoEntry: false });
  return stat ? `${stat.mtimeMs}:${stat.size}` : '-';
}

function isUnchanged(record: FileRecord | undefined, file: ScannedFile): boolean {
  return (
    record !== undefined &&
    record.localHash !== null &&
    record.size === file.size &&
    record.mtimeMs === file.mtimeMs
  );
}
