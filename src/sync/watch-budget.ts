import { readFileSync } from 'node:fs';

/**
 * inotify watches are counted per user, across all of the user's programs (fs.inotify.max_user_watches): 192,536
 * on the machine where a clone with 200,000 empty folders took 192,497 of them, and 75 s and 2.88 GB of chokidar
 * (0.4 ms and 15 KB a folder), leaving the user's editor none. flowsync watches at most a quarter of them, and
 * never more than 20,000 folders (about 300 MB and 7 s of chokidar at the rates above; the 100,000-file benchmark
 * has 1,000). With the old kernel default of 8,192 watches that is 2,048 folders. Where there is no such file
 * (macOS, Windows: no inotify), the 20,000 alone. `FLOWSYNC_MAX_WATCHED_FOLDERS` sets another cap (tests).
 */
export const SHARE_OF_USER_WATCHES = 4;
export const MAX_FOLDERS = 20_000;

/** Where the kernel keeps the per-user inotify watch limit (Linux). */
export const USER_WATCHES_FILE = '/proc/sys/fs/inotify/max_user_watches';

/** The most folders this process watches, and what set that number. */
export interface WatchLimit {
  folders: number;
  /** The kernel's per-user limit it is a share of; null where there is none (macOS, Windows) or it is set. */
  userWatches: number | null;
  /** `environment`: FLOWSYNC_MAX_WATCHED_FOLDERS; `kernel`: a quarter of userWatches; `flowsync`: MAX_FOLDERS. */
  setBy: 'environment' | 'kernel' | 'flowsync';
}

/** The kernel's per-user inotify watch limit, read once per call; null where there is no such file. */
export function userWatchLimit(file = USER_WATCHES_FILE): number | null {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch {
    return null;
  }
  const watches = Number.parseInt(text, 10);
  return Number.isInteger(watches) && watches > 0 ? watches : null;
}

/** The folders flowsync watches at most under this per-user limit (null: no inotify). */
export function watchLimitFor(userWatches: number | null): WatchLimit {
  if (userWatches === null) return { folders: MAX_FOLDERS, userWatches, setBy: 'flowsync' };
  const share = Math.floor(userWatches / SHARE_OF_USER_WATCHES);
  return share < MAX_FOLDERS
    ? { folders: share, userWatches, setBy: 'kernel' }
    : { folders: MAX_FOLDERS, userWatches, setBy: 'flowsync' };
}

/** The most folders this process watches, from the environment and the kernel's per-user limit. */
export function watchLimit(env: NodeJS.ProcessEnv = process.env): WatchLimit {
  const set = Number(env.FLOWSYNC_MAX_WATCHED_FOLDERS);
  if (Number.isInteger(set) && set > 0) return { folders: set, userWatches: null, setBy: 'environment' };
  return watchLimitFor(userWatchLimit());
}

export function watchedFolderCap(env: NodeJS.ProcessEnv = process.env): number {
  return watchLimit(env).folders;
}

/** The folders one process may watch, shared by every repository it syncs: the limit is the user's, not a repository's. */
export class FolderWatchBudget {
  private used = 0;

  constructor(readonly limit: number = watchedFolderCap()) {}

  left(): number {
    return Math.max(0, this.limit - this.used);
  }

  /** Takes `count` folders if that many are left; false (and nothing taken) otherwise. */
  take(count: number): boolean {
    if (count > this.left()) return false;
    this.used += count;
    return true;
  }

  give(count: number): void {
    this.used = Math.max(0, this.used - count);
  }
}

let shared: FolderWatchBudget | null = null;

/** The process's budget, made at the first watch. */
export function sharedWatchBudget(): FolderWatchBudget {
  shared ??= new FolderWatchBudget();
  return shared;
}
