import { existsSync } from 'node:fs';
import { lstat } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { FlowLayout } from './flow-layout.ts';
import type { Hasher } from './hasher.ts';
import type { IgnoreRules } from './ignore-rules.ts';
import { scanFlows, type ScannedFile } from './scanner.ts';
import type { FileRecord, SyncState } from './state.ts';

export interface ReconcilerOptions {
  repo: { root: string };
  state: SyncState;
  hasher: Hasher;
  repoId: number;
  layout: FlowLayout;
  rules: IgnoreRules;
  /** The engine's phase, set while scanning and when the repository folder is gone. */
  setPhase(phase: 'scanning' | 'missing', message: string | null): void;
  onHashed(done: number, total: number): void;
}

/**
 * Brings the state in line with the disk: scans folders, hashes what changed (by mtime and size) in the worker
 * pool, and records what is there and what is gone. What then differs from what the service acknowledged is the
 * outbox; the uploader sends it.
 */
export class Reconciler {
  /** A .gitignore changed: which files count may have changed anywhere, so the next round rescans first. */
  fullRescanDue = false;
  stopped = false;
  private readonly repo: { root: string };
  private readonly layout: FlowLayout;
  private readonly rules: IgnoreRules;
  private readonly repoId: number;

  constructor(private readonly options: ReconcilerOptions) {
    this.repo = options.repo;
    this.layout = options.layout;
    this.rules = options.rules;
    this.repoId = options.repoId;
  }

  private setPhase(phase: 'scanning' | 'missing', message: string | null): void {
    this.options.setPhase(phase, message);
  }

  /** Brings the state in line with the disk below `under` (default: all flow roots). */
  async rescan(under: readonly string[] = this.layout.roots): Promise<void> {
    if (!existsSync(this.repo.root)) return;
    this.setPhase('scanning', null);
    const scanned = await scanFlows(this.repo.root, this.layout, this.rules, under);
    const { state } = this.options;
    // Only what is below the rescanned folders: a new flow folder must not load a 100,000-file repository.
    const records =
      under === this.layout.roots
        ? state.files(this.repoId)
        : under.flatMap((f) => state.filesUnder(this.repoId, f));
    const known = new Map(records.map((file) => [`${file.flowPath}/${file.path}`, file]));
    const seen = new Set<string>();
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
    await this.hashAndSave(toHash);
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
      const results = await hasher.hash(chunk.map((file) => join(this.repo.root, file.flowPath, file.path)));
      const present = [];
      const missing = [];
      for (const [index, result] of results.entries()) {
        const file = chunk[index]!;
        if (result.missing) missing.push(file);
        else present.push({ ...file, size: result.size, localHash: result.hash, warning: result.warning });
      }
      state.saveLocal(this.repoId, present);
      state.markGone(this.repoId, missing);
      this.options.onHashed(Math.min(safe.length, start + CHUNK), safe.length);
    }
  }

  /** Handles a burst of watcher events: each path is looked at as it is now. */
  async applyChanges(paths: Set<string>): Promise<void> {
    if (this.stopped) return;
    if (!existsSync(this.repo.root)) {
      this.setPhase('missing', `${this.repo.root} is gone; syncing resumes when it is back`);
      return;
    }
    const files: ScannedFile[] = [];
    const folders: string[] = [];
    const gone: { flowPath: string; path: string }[] = [];
    for (const path of paths) {
      if (path.endsWith('.gitignore')) {
        this.rules.forget(dirname(path) === '.' ? '' : dirname(path));
        this.fullRescanDue = true;
        continue;
      }
      const stat = await lstat(join(this.repo.root, path)).catch(() => null);
      const location = this.layout.locate(path);
      if (stat?.isFile()) {
        if (location && !this.rules.ignores(path))
          files.push({ ...location, size: stat.size, mtimeMs: stat.mtimeMs });
      } else if (stat?.isDirectory()) {
        if (!this.rules.ignores(`${path}/`)) folders.push(path);
      } else {
        if (location) gone.push(location);
        this.options.state.markGoneUnder(this.repoId, path);
      }
    }
    this.options.state.markGone(this.repoId, gone);
    await this.hashAndSave(files);
    if (folders.length > 0) await this.rescan(folders);
  }
}

function isUnchanged(record: FileRecord | undefined, file: ScannedFile): boolean {
  return (
    record !== undefined &&
    record.localHash !== null &&
    record.size === file.size &&
    record.mtimeMs === file.mtimeMs
  );
}
