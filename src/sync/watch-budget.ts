import { readFileSync } from 'node:fs';

/**
 * inotify watches are counted per user, across all of the user's programs (fs.inotify.max_user_watches): 192,536
 * on the machine where a clone with 200,000 empty folders took 192,497 of them, and 75 s and 2.88 GB of chokidar
 * (0.4 ms and 15 KB a folder), leaving the user's editor none. flowsync watches at most a quarter of them, and
 * never more than 20,000 folders (about 300 MB and 7 s of chokidar at the rates above; the 100,000-file benchmark
 * has 1,000). With the old kernel default of 8,192 watches that is 2,048 folders. Where there is no such file
 * (macOS, Windows: no inotify), the 20,000 alone. `FLOWSYNC_MAX_WATCHED_FOLDERS` sets another cap (tests).
 */
const SHARE_OF_USER_WATCHES = 4;
const MAX_FOLDERS = 20_000;

/** The most folders this process watches, from the environment and the kernel's per-user limit. */
export function watchedFolderCap(env: NodeJS.ProcessEnv = process.env): number {
  const set = Number(env.FLOWSYNC_MAX_WATCHED_FOLDERS);
  if (Number.isInteger(set) && set > 0) return set;
  let userWatches: number;
  try {
    userWatches = Number.parseInt(readFileSync('/proc/sys/fs/inotify/max_user_watches', 'utf8'), 10);
  } catch {
    return MAX_FOLDERS;
  }
  if (!Number.isInteger(userWatches) || userWatches <= 0) return MAX_FOLDERS;
  return Math.min(MAX_FOLDERS, Math.floor(userWatches / SHARE_OF_USER_WATCHES));
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
