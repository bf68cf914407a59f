import { watch, type FSWatcher } from 'chokidar';
import { relative, sep } from 'node:path';
import type { IgnoreRules } from './ignore-rules.ts';

/**
 * Watches a repository's flow roots with chokidar and reports changed paths (relative to the repository, `/`
 * separated). Ignored folders are never entered, so `node_modules` in a flow costs no watches.
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
      // Atomic saves (write a temporary file, rename it over the old one) arrive as one change.
      atomic: true,
      ignored: (absolute, stats) => {
        const repoPath = this.toRepoPath(absolute);
        if (repoPath === null || repoPath === '') return false;
        return this.rules.ignores(stats?.isDirectory() ? `${repoPath}/` : repoPath);
      },
    });
    this.watcher.on('all', (_event, absolute) => {
      const repoPath = this.toRepoPath(absolute);
      if (repoPath) this.onChange(repoPath);
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

  private toRepoPath(absolute: string): string | null {
    const path = relative(this.repoRoot, absolute);
    if (path.startsWith('..')) return null;
    return sep === '/' ? path : path.split(sep).join('/');
  }
}
