import { existsSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { notRealFolder, warningOf } from './contained-fs.mjs';
import type { FlowLayout } from './flow-layout.ts';
import type { IgnoreRules } from './ignore-rules.ts';
import type { Reconciler } from './reconciler.ts';
import type { FlowWatcher } from './watcher.ts';

export interface PresenceOptions {
  repo: { root: string };
  layout: FlowLayout;
  rules: IgnoreRules;
  watcher: FlowWatcher;
  reconciler: Reconciler;
  /** Whether the engine is waiting for the repository folder to come back. */
  isMissing(): boolean;
  setMissing(message: string): void;
  /** Something was rescanned: a round may have work. */
  changed(): void;
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
    return this.watcher.add(present);
  }

  /** Flow roots that appeared (or vanished) and the repository folder itself. */
  async check(): Promise<void> {
    const { reconciler } = this.options;
    if (!existsSync(this.repo.root)) {
      if (!this.options.isMissing())
        this.options.setMissing(`${this.repo.root} is gone; syncing resumes when it is back`);
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
    for (const root of this.layout.roots) {
      const outside = notRealFolder(this.repo.root, root);
      if (outside === null) {
        present.push(root);
        continue;
      }
      this.watcher.forget(root); // watched again, and scanned whole, when it comes back
      // Swapped for a link: scanned once, so that what was below it leaves and the link is reported.
      if (warningOf(outside.kind) && !reconciler.refusedRoots.has(root)) linked.push(root);
    }
    if (linked.length > 0) {
      await reconciler.rescan(linked);
      this.options.changed();
    }
    const appeared = await this.watcher.add(present);
    if (appeared.length > 0) {
      await reconciler.rescan(appeared);
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
