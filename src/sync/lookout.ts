import type { PresenceCheck } from './presence.ts';
import { outermostFolders } from './outermost.ts';
import type { Reconciler } from './reconciler.ts';
import type { SyncMiss } from './round-report.ts';

/**
 * Every repository is rescanned whole this often (±20 %), as Syncthing does hourly: the watcher is a hint, the
 * rescan the truth. 100,000 unchanged files cost 2.3 s of CPU, 88 MiB read(2) from the page cache (the state's
 * pages; no file is read) and no request; 10,000 files 0.33 s (bench/sync.ts, 2 shared cores at load 12 to 17). Every
 * 10 minutes is 0.4 % of one core at 100,000 files, and a miss is sent within 12 minutes at worst.
 */
export const RESCAN_INTERVAL_MS = 10 * 60_000;

/**
 * A watching engine asks the service what changed there this often (±20 %, so at most 54 s): a teammate's edit shows
 * as "newer on the service" within a minute, not only at "Sync now". A quick check is one
 * `list_flows` call, and a listing of the flows whose aggregate changed since the last one: 50 agents on a
 * repository of 100,000 files cost the service a few % of one core (bench/service-check.ts, README).
 */
export const SERVICE_CHECK_MS = 45_000;

/** What the lookout needs of the engine: its queue, its background, what it tells. */
export interface LookoutPort {
  reconciler: Reconciler;
  presence: PresenceCheck;
  /** The flow roots, each watched anew after a watcher error. */
  roots: readonly string[];
  forgetWatched(root: string): void;
  /** Whether the watcher's own reports have all been taken in (then what a rescan finds was missed). */
  watcherIdle(): boolean;
  /** Local work through the engine's queue, then a round unless `thenRound` is false. */
  local(task: () => Promise<unknown>, thenRound?: boolean): Promise<void>;
  /** Work nobody awaits: its failure shows in the status. */
  inBackground(work: Promise<void>): void;
  /** After a periodic rescan (full) and every SERVICE_CHECK_MS (quick): the service checked where it can be. */
  checkQuietly(quick?: boolean): Promise<void>;
  /** Whether the live feed tells every write on the service now: the quick look is then left out. */
  live(): boolean;
  missed(miss: SyncMiss): void;
  rescanned(): void;
  presenceIntervalMs: number;
  rescanIntervalMs: number;
  serviceCheckIntervalMs: number;
}

/**
 * What looks at the disk besides the watcher's reports: the presence check each second (roots and the repository
 * coming and going), the periodic rescan, the quick look at the service each minute, and the rescan of folders the watcher just started to watch. What a
 * rescan finds that the watcher did not report is counted as missed and said, so that a miss is never silent.
 */
export class Lookout {
  /** Files rescans found that the watcher had not reported, since the start. */
  missed = 0;
  private presenceTimer: NodeJS.Timeout | null = null;
  private presenceQueued = false;
  private rescanTimer: NodeJS.Timeout | null = null;
  private serviceCheckTimer: NodeJS.Timeout | null = null;
  private readonly newFolders = new Set<string>();
  private newFoldersQueued = false;
  private stopped = false;

  constructor(private readonly port: LookoutPort) {}

  /**
   * Whether the repository is watched (its presence checked each second): a count of deletions may stand still
   * meanwhile.
   */
  get watching(): boolean {
    return this.presenceTimer !== null;
  }

  /** Starts the presence check and the periodic rescan. */
  start(): void {
    this.presenceTimer = setInterval(() => {
      // One check at a time: a long round must not pile up a check per second behind it.
      if (this.presenceQueued || this.stopped) return;
      this.presenceQueued = true;
      this.port.inBackground(
        this.port.local(() => this.port.presence.check(), false).finally(() => (this.presenceQueued = false)),
      );
    }, this.port.presenceIntervalMs);
    this.presenceTimer.unref();
    this.scheduleRescan();
    this.scheduleServiceCheck();
  }

  stop(): void {
    this.stopped = true;
    if (this.presenceTimer) clearInterval(this.presenceTimer);
    if (this.rescanTimer) clearTimeout(this.rescanTimer);
    if (this.serviceCheckTimer) clearTimeout(this.serviceCheckTimer);
  }

  /** The next quick look at the service (checkService), at the interval ±20 %. */
  private scheduleServiceCheck(): void {
    if (this.stopped) return;
    this.serviceCheckTimer = setTimeout(
      () =>
        this.port.live()
          ? this.scheduleServiceCheck()
          : this.port.inBackground(this.port.checkQuietly(true).finally(() => this.scheduleServiceCheck())),
      this.port.serviceCheckIntervalMs * (0.8 + Math.random() * 0.4),
    );
    this.serviceCheckTimer.unref();
  }

  /** The next periodic rescan, at the interval ±20 %, so that many repositories do not rescan at once. */
  private scheduleRescan(): void {
    if (this.stopped) return;
    this.rescanTimer = setTimeout(
      () => {
        this.port.inBackground(
          this.verify('periodic')
            .then(() => this.port.checkQuietly())
            .finally(() => {
              this.port.rescanned();
              this.scheduleRescan();
            }),
        );
      },
      this.port.rescanIntervalMs * (0.8 + Math.random() * 0.4),
    );
    this.rescanTimer.unref();
  }

  /**
   * A rescan that checks the watcher (periodic, after a new folder's watch is in place, after a root came back or
   * the watcher failed): what it finds is sent, logged (the `missed` event) and counted in the status.
   */
  private async verify(reason: string, under?: readonly string[]): Promise<void> {
    await this.port.local(async () => this.found(reason, await this.port.reconciler.rescan(under)));
  }

  /** What a verifying rescan found: logged and counted, so that a miss is never silent. */
  found(reason: string, files: number): void {
    // With the watcher's own reports still waiting, what the rescan found may be theirs: sent, not counted.
    if (files === 0 || !this.port.watcherIdle()) return;
    this.missed += files;
    this.port.missed({ files, reason });
  }

  /**
   * A new folder is watched now: rescanned, with every other new folder watched meanwhile, in one job (a
   * checkout that makes 3,000 folders queued 3,000 rescans, and the presence check waited behind them).
   */
  newFolder(folder: string): void {
    this.newFolders.add(folder);
    if (this.newFoldersQueued) return;
    this.newFoldersQueued = true;
    this.port.inBackground(
      this.port.local(async () => {
        this.newFoldersQueued = false;
        const outermost = outermostFolders(this.newFolders);
        this.newFolders.clear();
        this.found('new folder', await this.port.reconciler.rescan(outermost));
      }),
    );
  }

  /** After a watcher error: every root watched anew, then rescanned, since events may have been lost. */
  async restartWatcher(reason: string): Promise<void> {
    if (this.stopped) return;
    for (const root of this.port.roots) this.port.forgetWatched(root);
    await this.port.presence.watchPresentRoots();
    await this.verify(reason);
  }
}
