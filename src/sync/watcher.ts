import { watch, type FSWatcher } from 'chokidar';
import { join, relative, sep } from 'node:path';
import type { IgnoreRules } from './ignore-rules.ts';

/**
 * Watches a repository's flow roots with chokidar and reports changed paths (relative to the repository, `/`
 * separated). chokidar watches the folders only, and each folder's raw events name the file that changed: on
 * Linux chokidar would otherwise keep one fs.watch per file, over 600 MB and 11 s to start for 100,000 files,
 * against a few MB for the folders. The engine looks at every reported path as it is now, so a raw event is
 * all it needs. Ignored folders are never entered, so `node_modules` in a flow costs no watches.
 */
export class FlowWatcher {
  private watcher: FSWatcher | null = null;
  private readonly watched = new Set<string>();

  constructor(
    private readonly repoRoot: string,
    private readonly rules: IgnoreRules,
    private readonly onChange: (repoPath: string) => void,
    private readonly onError: (error: Error) => void,
  ) {}

  /** Starts watching these folders (relative to the repository) if not yet watched; returns the new ones. */
  async add(folders: readonly string[]): Promise<string[]> {
    const fresh = folders.filter((folder) => !this.watched.has(folder));
    if (fresh.length === 0) return fresh;
    for (const folder of fresh) this.watched.add(folder);
    const paths = fresh.map((folder) => `${this.repoRoot}/${folder}`);
    if (this.watcher) {
      this.watcher.add(paths);
      return fresh;
    }
    this.watcher = watch(paths, {
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
    // Folders that appear or go (chokidar starts and stops watching them itself).
    this.watcher.on('all', (_event, absolute) => this.report(absolute));
    // Anything that happened to an entry of a watched folder: a file written, created, renamed or deleted. An
    // atomic save (write a temporary file, rename it over) is a burst of these, coalesced into one change.
    this.watcher.on('raw', (_event, name, details) => {
      const folder = (details as { watchedPath?: unknown } | undefined)?.watchedPath;
      if (name !== '' && typeof folder === 'string') this.report(join(folder, name));
    });
    this.watcher.on('error', (error) =>
      this.onError(error instanceof Error ? error : new Error(String(error))),
    );
    await new Promise<void>((ready) => this.watcher!.once('ready', () => ready()));
    return fresh;
  }

  /** Forgets a folder so that `add` watches it again (after it was deleted and may come back). */
  forget(folder: string): void {
    if (!this.watched.delete(folder)) return;
    void this.watcher?.unwatch(`${this.repoRoot}/${folder}`);
  }

  async close(): Promise<void> {
    await this.watcher?.close();
    this.watcher = null;
    this.watched.clear();
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
