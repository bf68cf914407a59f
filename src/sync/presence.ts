import { existsSync, lstatSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { folderGone } from '../protocol/index.ts';
import { tilde } from '../host/index.ts';
import { notRealFolder, warningOf } from './contained-fs.mjs';
import type { FlowLayout } from './flow-layout.ts';
import type { IgnoreRules } from './ignore-rules.ts';
import type { Reconciler } from './reconciler.ts';
import type { RootGuard } from './root-guard.ts';
import type { FlowWatcher } from './watcher.ts';

export interface PresenceOptions {
  repo: { root: string };
  layout: FlowLayout;
  rules: IgnoreRules;
  watcher: FlowWatcher;
  reconciler: Reconciler;
  guard: RootGuard;
  /** Whether the engine is waiting for the repository folder to come back. */
  isMissing(): boolean;
  setMissing(message: string): void;
  /** Something was rescanned: a round may have work. */
  changed(): void;
  /** Flow roots that went away (or were held) and are back: rescanned, what they hold counted as missed. */
  cameBack(roots: string[]): Promise<void>;
  /** A flow root is held, or no longer: the status has news. */
  heldChanged(): void;
}

/**
 * The line for a repository none of whose flow roots is there (a folder added without `flows/`), or null. Such a
 * repository is kept, not refused: a `flows/` made later is found by the presence check below and synced, and
 * nothing is deleted meanwhile (a root the service has files of is held by the RootGuard, and says so instead).
 * A root that is a link or cannot be read is not "not there": the containment rule reports it.
 */
export function nothingToSync(repoRoot: string, roots: readonly string[]): string | null {
  if (roots.some((root) => notRealFolder(repoRoot, root)?.kind !== 'missing')) return null;
  const folders = roots.map((root) => `${root}/`).join(' or ');
  return `no ${folders} folder in ${tilde(repoRoot)}: nothing to sync; set its flow folders in Settings`;
}

/**
 * What the watcher cannot see, looked at every second: the repository folder itself (moved away and back), flow
 * roots that appear or vanish, and the .gitignore files above the flow roots.
 */
export class PresenceCheck {
  /** mtimes of the .gitignore files above the flow roots, which the watcher does not see. */
  private outerIgnoreFiles = '';
  private readonly repo: { root: string };
  private readonly layout: FlowLayout;
  private readonly rules: IgnoreRules;
  private readonly watcher: FlowWatcher;
  /**
   * The folder (device, inode, birth time) each flow root was when it was watched. A root deleted and re-created
   * between two checks (`rm -rf flows && git checkout -- flows`) is another folder under the same name: chokidar
   * still watches the deleted one, and the agent heard nothing after it (5 of 5 runs, deaf after 180 s).
   */
  private readonly watchedAs = new Map<string, string>();

  constructor(private readonly options: PresenceOptions) {
    this.repo = options.repo;
    this.layout = options.layout;
    this.rules = options.rules;
    this.watcher = options.watcher;
  }

  /** Remembers the .gitignore files as they are before the first scan. */
  remember(): void {
    this.outerIgnoreFiles = this.outerIgnoreSignature();
  }

  /** Flow roots that are real folders are watched; one that is a link (or below one) never is. Returns those newly watched. */
  async watchPresentRoots(): Promise<string[]> {
    const present = this.layout.roots.filter((root) => notRealFolder(this.repo.root, root) === null);
    for (const root of present) if (!this.watchedAs.has(root)) this.watchedAs.set(root, this.identity(root));
    return this.watcher.add(present);
  }

  /**
   * Device, inode and birth time: a folder re-created at once often gets the inode number just freed (measured
   * on ext4: the same number, which left the agent deaf in 1 of 4 runs of the test), and its birth time (statx)
   * tells it from the deleted one. Where the file system keeps none (0), only a burst of changes that finds the
   * root gone re-watches it; the periodic rescan still sends what the dead watch missed.
   */
  private identity(root: string): string {
    const stat = lstatSync(join(this.repo.root, root), { throwIfNoEntry: false });
    return stat ? `${stat.dev}:${stat.ino}:${stat.birthtimeMs}` : '-';
  }

  /** Flow roots that appeared (or vanished) and the repository folder itself. */
  async check(): Promise<void> {
    const { reconciler } = this.options;
    if (!existsSync(this.repo.root)) {
      if (!this.options.isMissing()) this.options.setMissing(folderGone(this.repo.root));
      return;
    }
    if (this.options.isMissing()) {
      for (const root of this.layout.roots) this.watcher.forget(root);
      await reconciler.rescan();
      await this.watchPresentRoots();
      this.options.changed();
      return;
    }
    this.watcher.checkBudget();
    const outer = this.outerIgnoreSignature();
    if (outer !== this.outerIgnoreFiles) {
      this.outerIgnoreFiles = outer;
      this.rules.forgetAll();
      await reconciler.rescan();
      this.options.changed();
    }
    const present: string[] = [];
    const linked: string[] = [];
    const back: string[] = [];
    const { guard } = this.options;
    let heldChanged = false;
    for (const root of this.layout.roots) {
      const wasHeld = guard.held.has(root);
      const held = guard.check(root) !== null;
      if (held !== wasHeld) heldChanged = true;
      if (wasHeld && !held) back.push(root);
      const outside = notRealFolder(this.repo.root, root);
      if (outside === null) {
        // Another folder than the one watched: the watch is on the deleted one, so it is watched anew.
        const watchedAs = this.watchedAs.get(root);
        if (watchedAs !== undefined && watchedAs !== this.identity(root)) {
          this.watcher.forget(root);
          this.watchedAs.delete(root);
        }
        present.push(root);
        continue;
      }
      this.watchedAs.delete(root);
      this.watcher.forget(root); // watched again, and scanned whole, when it comes back
      // Swapped for a link: scanned once, so that what was below it leaves and the link is reported.
      if (warningOf(outside.kind) && !reconciler.refusedRoots.has(root)) linked.push(root);
    }
    if (linked.length > 0) {
      await reconciler.rescan(linked);
      this.options.changed();
    }
    if (heldChanged) this.options.heldChanged();
    for (const root of present) if (!this.watchedAs.has(root)) this.watchedAs.set(root, this.identity(root));
    const appeared = await this.watcher.add(present);
    const rescan = [...new Set([...appeared, ...back])];
    if (rescan.length > 0) {
      await this.options.cameBack(rescan);
      this.options.changed();
    }
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
}

function statSignature(path: string): string {
  const stat = statSync(path, { throwIfNoEntry: false });
  return stat ? `${stat.mtimeMs}:${stat.size}` : '-';
}
