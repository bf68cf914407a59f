import { existsSync } from 'node:fs';
import { lstat } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { describeFileWarning } from '../protocol/index.ts';
import { kindOf, notRealFolder, warningOf } from './contained-fs.mjs';
import { FlowLayout } from './flow-layout.ts';
import type { Hasher } from './hasher.ts';
import type { IgnoreRules } from './ignore-rules.ts';
import { placeOf, scanFlows, type RefusedEntry, type ScannedFile } from './scanner.ts';
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
  /** A flow root turned out to be a link (or below one): the watcher must let go of it. */
  forgetRoot(root: string): void;
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
  /** Flow roots that are links (or below one): refused, with the message that names them. */
  readonly refusedRoots = new Map<string, string>();
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
          this.options.forgetRoot(path);
        }
      }
    }
    this.options.state.markGone(this.repoId, gone);
    this.saveRefused(refused);
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
