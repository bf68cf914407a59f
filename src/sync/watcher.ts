import { watch, type ChokidarOptions, type FSWatcher } from 'chokidar';
import { join, relative, sep } from 'node:path';
import type { IgnoreRules } from './ignore-rules.ts';
import { sharedWatchBudget, type FolderWatchBudget } from './watch-budget.ts';
import { countWatchedFolders, flowFoldersIn } from './watch-needs.ts';

/**
 * Folders given to one chokidar watcher at a time. chokidar starts every folder it is given at once, and stats
 * every entry of each concurrently: 100,000 files in 1,000 folders in one watcher peaked at +310 MB and took
 * 3.7 s; ten folders at a time, one group after the other, +70 MB and 2.6 s (bench/peer.ts, docs/performance).
 */
const GROUP = 10;

/** A new folder's watch is looked for every WATCH_LOOK_MS, at most WATCH_LOOK_TRIES times, before it is rescanned. */
const WATCH_LOOK_MS = 50;
const WATCH_LOOK_TRIES = 40;

/** One watched flow root: a watcher on the root alone, and groups of watchers on the folders below it. */
interface WatchedRoot {
  top: FSWatcher;
  groups: FSWatcher[];
  /** Folders taken from the budget: those counted at the start, then those chokidar watches (checkBudget). */
  taken: number;
  /** A folder came or went since the last checkBudget, or the count changed at it: chokidar may still be walking. */
  moved: boolean;
  /** Since when the count has not changed while `moved` (null: it just changed). */
  steadySince: number | null;
}

/**
 * How long a root's folder count must stay the same before its checks stop. chokidar watches the folders its walk
 * of a new folder finds without an event for each, so one unchanged count does not mean the walk is over: on a
 * loaded machine a walk stalled for longer than one check (100 ms in the tests), the checks stopped, and a root
 * that grew past the budget stayed watched (1 run of the suite in 7).
 */
const STEADY_MS = 2000;

/**
 * Watches a repository's flow roots with chokidar and reports changed paths (relative to the repository, `/`
 * separated). chokidar watches the folders only, and each folder's raw events name the file that changed: on
 * Linux chokidar would otherwise keep one fs.watch per file, over 600 MB and 11 s to start for 100,000 files,
 * against a few MB for the folders. The engine looks at every reported path as it is now, so a raw event is
 * all it needs. Ignored folders are never entered, so `node_modules` in a flow costs no watches.
 *
 * A flow root is watched by itself (depth 0), and the folders below it in groups (GROUP), one group started after
 * the other, which bounds start-up memory. A folder that appears in the root later joins the last group.
 */
export class FlowWatcher {
  private readonly roots = new Map<string, WatchedRoot>();
  /** Flow roots with more folders than the budget leaves: not watched, each with the message that says so. */
  readonly refused = new Map<string, string>();
  private closed = false;
  /** New folders waiting for their watch before they are rescanned. */
  private readonly pendingFolders = new Set<string>();
  /**
   * Setups waiting for a chokidar watcher's "ready", by watcher: ended when it is closed first, since chokidar
   * drops every listener on close and "ready" then never comes (a setup waiting for it held the engine's queue,
   * and its stop, forever).
   */
  private readonly waitingReady = new Map<FSWatcher, () => void>();

  constructor(
    private readonly repoRoot: string,
    private readonly rules: IgnoreRules,
    private readonly onChange: (repoPath: string) => void,
    private readonly onError: (error: Error) => void,
    /** A root was refused (`refused` says why): the status has news. */
    private readonly onRefused: () => void = () => {},
    private readonly budget: FolderWatchBudget = sharedWatchBudget(),
    /**
     * A folder appeared below a root and its watch should now be in place: to be rescanned. chokidar reports a new
     * folder before it lists and watches it, so files written between the engine's scan of it and its watch were
     * never heard of (3 files of `flows/x/gen/d0`, 1 run in 2, during an outage).
     */
    private readonly onNewFolder: (repoPath: string) => void = () => {},
  ) {}

  /**
   * Starts watching these folders (relative to the repository) if not yet watched (or refused); returns the new
   * ones, refused or not (they are scanned either way).
   */
  async add(folders: readonly string[]): Promise<string[]> {
    const fresh = folders.filter((folder) => !this.roots.has(folder) && !this.refused.has(folder));
    for (const folder of fresh) await this.watchRoot(folder);
    return fresh;
  }

  /** Forgets a folder so that `add` watches it again (after it was deleted and may come back). */
  forget(folder: string): void {
    this.refused.delete(folder);
    const watched = this.roots.get(folder);
    if (!watched) return;
    this.roots.delete(folder);
    this.budget.give(watched.taken);
    for (const watcher of [watched.top, ...watched.groups]) void this.closeWatcher(watcher);
  }

  async close(): Promise<void> {
    this.closed = true;
    const watched = [...this.roots.values()];
    this.roots.clear();
    for (const { taken } of watched) this.budget.give(taken);
    await Promise.all(
      watched.flatMap(({ top, groups }) => [top, ...groups]).map((watcher) => this.closeWatcher(watcher)),
    );
  }

  private async watchRoot(root: string): Promise<void> {
    const absolute = `${this.repoRoot}/${root}`;
    // Counted before anything is watched: past the budget, nothing of this root is (a clone with 200,000 folders
    // took 192,497 of the user's 192,536 inotify watches, 2.88 GB and 75 s).
    const left = this.budget.left();
    const folders = countWatchedFolders(this.repoRoot, root, this.rules, left + 1);
    if (folders > left || !this.budget.take(folders)) {
      this.refuse(root);
      return;
    }
    const watched: WatchedRoot = {
      top: this.open([absolute], { depth: 0 }),
      groups: [],
      taken: folders,
      moved: false,
      steadySince: null,
    };
    this.roots.set(root, watched);
    // A folder that appears in the root (a new flow) joins the last group, which watches it and what is below it.
    // One that goes is let go of by every group: chokidar shares one fs.watch per path between its watchers, and
    // the dead one would otherwise be reused when a folder of that name comes back.
    watched.top.on('unlinkDir', (path) => {
      for (const group of watched.groups) group.unwatch(path);
    });
    watched.top.on('addDir', (path) => {
      if (path === absolute || this.roots.get(root) !== watched) return;
      const last = watched.groups.at(-1);
      if (last) last.add(path);
      else watched.groups.push(this.open([path]));
    });
    await this.ready(watched.top);
    const below = flowFoldersIn(this.repoRoot, root, this.rules);
    for (let start = 0; start < below.length; start += GROUP) {
      if (this.closed || this.roots.get(root) !== watched) return;
      const group = below.slice(start, start + GROUP);
      const watcher = this.open(group.map((folder) => join(absolute, folder)));
      watched.groups.push(watcher);
      await this.ready(watcher);
    }
  }

  /** chokidar's "ready" for this watcher, or its close, whichever comes first. */
  private ready(watcher: FSWatcher): Promise<void> {
    if (this.closed) return Promise.resolve();
    return new Promise((resolve) => {
      const done = () => {
        this.waitingReady.delete(watcher);
        resolve();
      };
      this.waitingReady.set(watcher, done);
      watcher.once('ready', done);
    });
  }

  private closeWatcher(watcher: FSWatcher): Promise<void> {
    this.waitingReady.get(watcher)?.();
    return watcher.close();
  }

  /** Lets go of a root past the budget, and says why and what to do. */
  private refuse(root: string): void {
    const watched = this.roots.get(root);
    if (watched) {
      this.roots.delete(root);
      this.budget.give(watched.taken);
      for (const watcher of [watched.top, ...watched.groups]) void this.closeWatcher(watcher);
    }
    this.refused.set(
      root,
      `${root} is not watched: it has more folders than flowsync watches (${this.budget.limit} in all, so that ` +
        "the user's other programs keep their inotify watches): add the folders it need not sync to .gitignore, " +
        'then pause and resume the repository',
    );
    this.onRefused();
  }

  /**
   * Brings each root's share of the budget in line with the folders chokidar watches for it now, and lets go of
   * a root past the budget. Called every second (the presence check): folders that appear below a watched root
   * (a checkout of another branch) are watched by chokidar on its own, without an event for those its walk finds.
   * chokidar's own list is the truth; it costs some milliseconds at 20,000 folders.
   */
  checkBudget(): void {
    for (const [root, watched] of this.roots) {
      // Only after folders came or went: listing chokidar's folders copies every file name it knows (100,000).
      if (!watched.moved) continue;
      // Distinct folders: the groups each list the flow root too, as the parent of what they watch.
      const absolute = join(this.repoRoot, root);
      const folders = new Set<string>();
      for (const watcher of [watched.top, ...watched.groups]) {
        for (const folder of Object.keys(watcher.getWatched())) {
          if (folder === absolute || folder.startsWith(`${absolute}${sep}`)) folders.add(folder);
        }
      }
      const now = folders.size;
      if (now !== watched.taken) watched.steadySince = null;
      else if (watched.steadySince === null) watched.steadySince = Date.now();
      else if (Date.now() - watched.steadySince >= STEADY_MS) watched.moved = false;
      if (now <= watched.taken) {
        this.budget.give(watched.taken - now);
        watched.taken = now;
      } else if (this.budget.take(now - watched.taken)) {
        watched.taken = now;
      } else {
        this.refuse(root);
      }
    }
  }

  /** A folder came or went below a watched root: its count is looked at again (checkBudget). */
  private folderMoved(absolute: string): void {
    for (const [root, watched] of this.roots) {
      const top = join(this.repoRoot, root);
      if (absolute === top || absolute.startsWith(`${top}${sep}`)) {
        watched.moved = true;
        watched.steadySince = null;
      }
    }
  }

  private open(paths: string[], options: Pick<ChokidarOptions, 'depth'> = {}): FSWatcher {
    const watcher = watch(paths, {
      ...options,
      ignoreInitial: true,
      // Containment: a link is never followed, so a link to ~/.ssh is never watched, and a loop of links
      // (`up -> ..`) costs nothing. A link's own changes arrive as its folder's raw events.
      followSymlinks: false,
      ignored: (absolute, stats) => {
        // Folders only (files arrive as their folder's raw events); links, FIFOs and devices are not entered.
        if (stats && !stats.isDirectory()) return true;
        const repoPath = this.toRepoPath(absolute);
        if (repoPath === null || repoPath === '') return false;
        return stats?.isDirectory() === true && this.rules.ignores(`${repoPath}/`);
      },
    });
    listFoldersOnly(watcher);
    // Folders that appear or go (chokidar starts and stops watching them itself).
    watcher.on('all', (event, absolute) => {
      if (event === 'addDir' || event === 'unlinkDir') this.folderMoved(absolute);
      if (event === 'addDir') this.awaitNewFolderWatch(absolute);
      this.report(absolute);
    });
    // Anything that happened to an entry of a watched folder: a file written, created, renamed or deleted. An
    // atomic save (write a temporary file, rename it over) is a burst of these, coalesced into one change.
    watcher.on('raw', (_event, name, details) => {
      const folder = (details as { watchedPath?: unknown } | undefined)?.watchedPath;
      if (name !== '' && typeof folder === 'string') this.report(join(folder, name));
    });
    watcher.on('error', (error) => this.onError(error instanceof Error ? error : new Error(String(error))));
    return watcher;
  }

  /**
   * Asks for a rescan of a new folder once chokidar watches it: chokidar lists a new folder, then watches it (a
   * few ms for a small one), with no event when it is done. Its closers, set once the watch is in place, say so;
   * looked at every WATCH_LOOK_MS, up to WATCH_LOOK_TRIES times, then the rescan runs anyway (the periodic one is
   * the last word). Nested new folders are each reported: one rescan per burst, since they coalesce in the
   * scheduler.
   */
  private awaitNewFolderWatch(absolute: string): void {
    const repoPath = this.toRepoPath(absolute);
    if (!repoPath || this.pendingFolders.has(repoPath)) return;
    this.pendingFolders.add(repoPath);
    let tries = 0;
    const look = () => {
      if (this.closed) return;
      if (!this.isWatching(absolute) && ++tries < WATCH_LOOK_TRIES) {
        setTimeout(look, WATCH_LOOK_MS).unref();
        return;
      }
      this.pendingFolders.delete(repoPath);
      // Only the outermost of the folders waiting: a rescan of it covers those below.
      if ([...this.pendingFolders].some((other) => repoPath.startsWith(`${other}/`))) return;
      this.onNewFolder(repoPath);
    };
    setTimeout(look, WATCH_LOOK_MS).unref();
  }

  /** Whether some watcher of a root has its watch on this folder in place (chokidar's closers, set after it). */
  private isWatching(absolute: string): boolean {
    for (const watched of this.roots.values()) {
      for (const watcher of [watched.top, ...watched.groups]) {
        const closers = (watcher as unknown as { _closers?: Map<string, unknown> })._closers;
        if (closers === undefined) return true; // another chokidar: no way to tell, the delay has to do
        if (closers.has(absolute)) return true;
      }
    }
    return false;
  }

  private report(absolute: string): void {
    const repoPath = this.toRepoPath(absolute);
    if (repoPath) this.onChange(repoPath);
  }

  private toRepoPath(absolute: string): string | null {
    const path = relative(this.repoRoot, absolute);
    if (path.startsWith('..')) return null;
    return sep === '/' ? path : path.split(sep).join('/');
  }
}

/** chokidar's listing of one folder (readdirp's options, as chokidar 5 passes them). */
interface ChokidarListing {
  _readdirp?: (root: string, options: ListingOptions) => unknown;
}
interface ListingOptions {
  fileFilter?: (entry: ListedEntry) => boolean;
  directoryFilter?: (entry: ListedEntry) => boolean;
  [option: string]: unknown;
}
interface ListedEntry {
  stats?: unknown;
  dirent?: unknown;
}

/**
 * Makes chokidar list folders by their names' types instead of an lstat of every entry. chokidar 5 lists each folder
 * with readdirp and `alwaysStat: true`, so its start-up lstat'ed every file of the tree (100,000 files: 2.9 s of CPU,
 * 3.2 s, +45 MB of RSS) only for `ignored` to drop them all: this watcher watches folders, and files arrive as their
 * folder's raw events. Listed by type (readdirp's `dirent` mode), folders only: 0.6 s of CPU, 0.6-0.8 s, +35 MB
 * less (docs/memory.md). The entry's Dirent stands in for its stats (it answers isDirectory and isSymbolicLink, all
 * that chokidar and `ignored` ask of a folder); a file is never listed. Another chokidar, without this private
 * method, is left as it is: slower, not wrong.
 */
function listFoldersOnly(watcher: FSWatcher): void {
  const listing = watcher as unknown as ChokidarListing;
  const original = listing._readdirp;
  if (typeof original !== 'function') return;
  listing._readdirp = function (this: FSWatcher, root: string, options: ListingOptions) {
    const { directoryFilter } = options;
    return original.call(this, root, {
      ...options,
      type: 'directories',
      alwaysStat: false,
      fileFilter: () => false,
      directoryFilter: (entry: ListedEntry) => {
        entry.stats = entry.dirent;
        return directoryFilter ? directoryFilter(entry) : true;
      },
    });
  };
}
