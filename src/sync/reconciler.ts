import { existsSync, lstatSync, type Stats } from 'node:fs';
import { lstat } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { describeFileWarning, folderGone } from '../protocol/index.ts';
import { isGone, kindOf, notRealFolder, warningOf } from './contained-fs.mjs';
import { FlowLayout } from './flow-layout.ts';
import { outermostFolders } from './outermost.ts';
import type { Hasher } from './hasher.ts';
import type { IgnoreRules } from './ignore-rules.ts';
import type { RootGuard } from './root-guard.ts';
import { cacheKeyOf, placeOf, scanFlows, type RefusedEntry, type ScannedFile } from './scanner.ts';
import type { SyncState } from './state.ts';
import type { CachedStat } from './state-records.ts';

export interface ReconcilerOptions {
  repo: { root: string };
  state: SyncState;
  hasher: Hasher;
  repoId: number;
  layout: FlowLayout;
  rules: IgnoreRules;
  /** Which flow roots may lose files now: below one that is held, nothing is taken as gone. */
  guard: RootGuard;
  /** The engine's phase, set while scanning and when the repository folder is gone. */
  setPhase(phase: 'scanning' | 'missing', message: string | null): void;
  onHashed(done: number, total: number): void;
  /** A flow root turned out to be a link (or below one): the watcher must let go of it. */
  forgetRoot(root: string): void;
}

/** Files given to the hash worker pool at a time (and saved in one transaction). */
const HASH_CHUNK = 512;
/** Paths of a burst looked at (lstat) at once. */
const LOOK_BATCH = 256;

interface PathLook {
  stat: Stats | null;
  /** Why the path could not be looked at (an errno code), or null. */
  failed: string | null;
}

/** Chunks a rescan has in the pool at once, so that the workers always have the next one (measured: 3 over 2). */
const HASH_CHUNKS_IN_FLIGHT = 3;

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

  /**
   * Brings the state in line with the disk below `under` (default: all flow roots); returns how many files it
   * found changed, new or gone that the state did not know of (a rescan that verifies the watcher). Streams: each slice of the
   * scan is compared with the state file by file and what changed is hashed as it comes, so that neither the
   * tree nor the state is ever held whole (100,000 files: the rescan's heap went from +90 MB to about +30 MB).
   */
  async rescan(under: readonly string[] = this.layout.roots): Promise<number> {
    if (!existsSync(this.repo.root)) return 0;
    this.setPhase('scanning', null);
    const { state } = this.options;
    // Keys of what is on disk (files and refused entries), to find what the state has and the disk has not.
    const seen = new Set<string>();
    const refused: RefusedEntry[] = [];
    // Folders that could not be listed, files that could not be looked at: what is below them is not gone.
    const unreadable: string[] = [];
    const progress: HashProgress = { done: 0, total: 0, news: 0, recorded: new Map() };
    let toHash: ScannedFile[] = [];
    // Chunks being hashed while the scan goes on: the workers read while the main thread stats and compares
    // (one at a time, the workers sat idle 70 % of a first sync of 100,000 files).
    // A chunk that fails is kept, not thrown at once: every chunk ends before the rescan ends with it, so none
    // writes to the state afterwards.
    const hashing: Promise<void>[] = [];
    const failures: unknown[] = [];
    const hash = (files: ScannedFile[]) =>
      hashing.push(this.hashAndSave(files, progress).catch((error: unknown) => void failures.push(error)));
    // The state's stats of the flow being compared, read once per flow (a walk lists a flow's files together).
    let flow: { path: string; stats: Map<string, CachedStat> } | null = null;
    const cachedStat = (file: ScannedFile) => {
      if (flow?.path !== file.flowPath)
        flow = { path: file.flowPath, stats: state.stats.ofFlow(this.repoId, file.flowPath) };
      return flow.stats.get(file.path);
    };
    // The files the state has on disk below `under` before this scan writes anything, and how many of them the scan
    // saw: equal, none is gone. The scan's own writes (the hashes it saves) touch only files it saw, and nothing
    // else writes while it runs (the engine's scheduler runs one task at a time).
    const present = state.presentCountBelow(this.repoId, under);
    let seenPresent = 0;
    for await (const slice of scanFlows(this.repo.root, this.layout, this.rules, under)) {
      if (this.stopped) break;
      progress.total = slice.total;
      for (const entry of slice.refused) {
        refused.push(entry);
        seen.add(`${entry.flowPath}/${entry.path}`);
        if (state.stats.of(this.repoId, entry.flowPath, entry.path)?.localHash != null) seenPresent++;
      }
      unreadable.push(...slice.unreadable);
      for (const [index, file] of slice.files.entries()) {
        seen.add(slice.keys[index]!);
        const record = cachedStat(file);
        if (record?.localHash != null) seenPresent++;
        if (isUnchanged(record, file)) progress.done++;
        else {
          toHash.push(file);
          progress.recorded!.set(file, record?.localHash ?? null);
        }
      }
      flow = null; // a slice's hashing may have saved new stats since
      if (toHash.length >= HASH_CHUNK) {
        hash(toHash);
        toHash = [];
        if (hashing.length >= HASH_CHUNKS_IN_FLIGHT) await hashing.shift();
        if (failures.length > 0) break;
      } else {
        this.options.onHashed(progress.done, progress.total);
      }
    }
    if (failures.length > 0 || this.stopped) {
      await Promise.all(hashing);
      if (failures.length > 0) throw failures[0];
      // Stopped in the middle: a part of the tree was not seen, which must not be taken for gone.
      return 0;
    }
    this.noteRefusedRoots(under, refused);
    // Looked at after the walk: a root that went meanwhile holds what the walk did not find.
    const { guard } = this.options;
    for (const root of this.layout.roots)
      if (
        under.some(
          (folder) => folder === root || folder.startsWith(`${root}/`) || root.startsWith(`${folder}/`),
        )
      )
        guard.check(root);
    const below = (key: string) => under.some((folder) => key.startsWith(`${folder}/`));
    const held = (key: string) => unreadable.some((path) => key === `${path}/` || key.startsWith(`${path}/`));
    const gone: { flowPath: string; path: string }[] = [];
    // Every file the state has on disk was seen: none to look for (100,000 rows read and compared, 170-250 ms of a
    // restart).
    const files = seenPresent === present ? [] : state.presentFiles(this.repoId);
    for (const file of files) {
      const key = `${file.flowPath}/${file.path}`;
      if (seen.has(key) || !below(key) || held(key) || guard.holds(key)) continue;
      // Not listed because a .gitignore line ignores it now, still on disk: not a deletion (only a file gone from
      // disk is). A pulled .gitignore deleted such files on the service for every teammate. Kept there, and said.
      if (this.rules.ignores(key) && isFileOnDisk(join(this.repo.root, key)))
        refused.push({ flowPath: file.flowPath, path: file.path, warning: 'ignored' });
      else gone.push(file);
    }
    state.markGone(this.repoId, gone);
    this.saveRefused(refused);
    this.saveUnreadable(unreadable);
    hash(toHash);
    await Promise.all(hashing);
    this.rules.dropAnswers();
    if (failures.length > 0) throw failures[0];
    return progress.news + gone.length;
  }

  /**
   * How many files differ between the disk and the state (new, changed by size or mtime, or gone), found by a scan
   * that writes nothing: while the state cannot be written, this is the count of changes waiting.
   */
  async countUnrecorded(): Promise<number> {
    if (!existsSync(this.repo.root)) return 0;
    const { state } = this.options;
    const seen = new Set<string>();
    let differ = 0;
    for await (const slice of scanFlows(this.repo.root, this.layout, this.rules, this.layout.roots)) {
      for (const entry of slice.refused) seen.add(`${entry.flowPath}/${entry.path}`);
      for (const file of slice.files) {
        seen.add(`${file.flowPath}/${file.path}`);
        if (!isUnchanged(state.stats.of(this.repoId, file.flowPath, file.path), file)) differ++;
      }
    }
    for (const file of state.presentFiles(this.repoId)) {
      if (!seen.has(`${file.flowPath}/${file.path}`)) differ++;
    }
    return differ;
  }

  /** Links, FIFOs, sockets and devices are kept as files not sent, each with its reason. */
  private saveRefused(refused: RefusedEntry[]): void {
    this.options.state.saveLocal(
      this.repoId,
      refused.map((entry) => ({ ...entry, size: 0, mtimeMs: 0, ctimeMs: 0, ino: 0, localHash: '' })),
    );
  }

  /** Paths that could not be looked at now: kept as the service has them, each a warning, read again later. */
  private saveUnreadable(paths: readonly string[]): void {
    const places = paths.flatMap((path) => placeOf(this.layout, path) ?? []);
    this.options.state.markUnreadable(this.repoId, places, paths);
  }

  /**
   * Looks again at what could not be read (each round, so with the round's back-off while it stays unreadable):
   * the folder of each such file, and each such flow or flow root itself, so that a folder readable again is
   * listed whole (files added to it meanwhile included). Returns whether anything is still unreadable.
   */
  async retryUnreadable(): Promise<boolean> {
    const { state } = this.options;
    const entries = state.unreadable(this.repoId);
    if (entries.length === 0) return false;
    const outermost = outermostFolders(
      entries.map(({ flowPath, path }) => {
        const repoPath = path === '' ? flowPath : `${flowPath}/${path}`;
        return path === '' ? flowPath : repoPath.slice(0, repoPath.lastIndexOf('/'));
      }),
    );
    await this.rescan(outermost);
    return state.unreadable(this.repoId).length > 0;
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

  /** Hashes files in the worker pool and records them; `progress` counts files looked at (hashed or unchanged). */
  private async hashAndSave(
    files: ScannedFile[],
    progress: HashProgress = { done: 0, total: files.length, news: 0 },
  ): Promise<void> {
    const { state, hasher } = this.options;
    const unsafe: ScannedFile[] = [];
    const safe: ScannedFile[] = [];
    for (const file of files) (FlowLayout.unsafeReason(file) === null ? safe : unsafe).push(file);
    state.saveLocal(
      this.repoId,
      unsafe.map((file) => ({ ...file, localHash: '', warning: 'unsafe-path' })),
    );
    progress.done += unsafe.length;
    for (let start = 0; start < safe.length; start += HASH_CHUNK) {
      const chunk = safe.slice(start, start + HASH_CHUNK);
      const results = await hasher.hash(
        this.repo.root,
        chunk.map((file) => `${file.flowPath}/${file.path}`),
      );
      const present = [];
      const missing = [];
      const unreadable = [];
      for (const [index, result] of results.entries()) {
        const file = chunk[index]!;
        if (result.missing) missing.push(file);
        else if (result.warning === 'unreadable') unreadable.push(file);
        else present.push({ ...file, size: result.size, localHash: result.hash, warning: result.warning });
      }
      const { recorded } = progress;
      if (recorded)
        for (const [index, result] of results.entries()) {
          const file = chunk[index]!;
          if (!result.missing && result.warning !== 'unreadable' && recorded.get(file) !== result.hash)
            progress.news++;
          recorded.delete(file);
        }
      state.saveLocal(this.repoId, present);
      const { guard } = this.options;
      state.markGone(
        this.repoId,
        missing.filter((file) => !guard.holds(`${file.flowPath}/${file.path}`)),
      );
      state.markUnreadable(this.repoId, unreadable);
      progress.done += chunk.length;
      this.options.onHashed(progress.done, progress.total);
    }
  }

  /** Handles a burst of watcher events: each path is looked at as it is now. */
  async applyChanges(paths: Set<string>): Promise<void> {
    try {
      await this.applyEach(paths);
    } catch (error) {
      this.fullRescanDue = true; // the burst's paths were not all looked at: the next round looks at everything
      throw error;
    }
  }

  private async applyEach(paths: Set<string>): Promise<void> {
    if (this.stopped) return;
    if (!existsSync(this.repo.root)) {
      this.setPhase('missing', folderGone(this.repo.root));
      return;
    }
    const files: ScannedFile[] = [];
    const folders: string[] = [];
    const gone: { flowPath: string; path: string }[] = [];
    const refused: RefusedEntry[] = [];
    const unreadable: string[] = [];
    /** Each root looked at once per burst: 10,000 deletions need not list the root 10,000 times. */
    const checked = new Map<string, boolean>();
    const looks = this.lookAtAll(paths);
    for (const path of paths) {
      // Stopping: what is not looked at yet is left to the next start's scan (50,000 deleted paths are seconds).
      if (this.stopped) return;
      if (path.endsWith('.gitignore')) {
        this.rules.forget(dirname(path) === '.' ? '' : dirname(path));
        this.fullRescanDue = true;
        continue;
      }
      // A name that is not UTF-8 arrives with replacement characters, a name that is not on disk: its folder's
      // scan, which reads names as bytes, lists it as not sent.
      if (path.includes('\uFFFD')) {
        if (path.lastIndexOf('/') > 0) folders.push(path.slice(0, path.lastIndexOf('/')));
        continue;
      }
      const { stat, failed } = await looks.next(path);
      if (failed !== null && !isGone(failed)) {
        unreadable.push(path);
        continue;
      }
      const kind = stat ? kindOf(stat) : 'missing';
      const location = this.layout.locate(path);
      if (stat && kind === 'file') {
        if (location && !this.rules.ignores(path)) files.push({ ...location, ...cacheKeyOf(stat) });
      } else if (kind === 'folder') {
        if (!this.rules.ignores(`${path}/`)) folders.push(path);
      } else {
        // Below a root that is not there (or empty, or on another drive): not gone, held until it is back.
        const root = this.layout.roots.find(
          (candidate) => path === candidate || path.startsWith(`${candidate}/`),
        );
        if (root !== undefined && !checked.has(root))
          checked.set(root, this.options.guard.check(root) !== null);
        if (root !== undefined && checked.get(root)) {
          if (path === root) this.options.forgetRoot(path);
          continue;
        }
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
    this.saveUnreadable(unreadable);
    await this.hashAndSave(files);
    if (folders.length > 0) await this.rescan(folders);
  }

  /**
   * How each path of a burst is now, looked at LOOK_BATCH at a time in parallel, handed out in the burst's order.
   * One `await lstat` per path took one turn of the event loop each, and in a storm of writes each turn also
   * carries thousands of watcher events: 1,000 rewritten files took 5.8 s to look at, until the writes stopped.
   */
  private lookAtAll(paths: Set<string>): { next(path: string): Promise<PathLook> } {
    const order = [...paths];
    const batches = new Map<number, Promise<Map<string, PathLook>>>();
    const batchOf = (index: number) => {
      const first = index - (index % LOOK_BATCH);
      let batch = batches.get(first);
      if (!batch) {
        batches.delete(first - LOOK_BATCH);
        const slice = order.slice(first, first + LOOK_BATCH);
        batch = Promise.all(slice.map((path) => this.lookAt(path))).then(
          (results) => new Map(slice.map((path, at) => [path, results[at]!])),
        );
        batches.set(first, batch);
      }
      return batch;
    };
    let index = 0;
    return {
      async next(path) {
        while (order[index] !== path) index++;
        return (await batchOf(index)).get(path)!;
      },
    };
  }

  /**
   * Below a link (or a FIFO...) the path is not in the repository: what was there is gone. Not looked at (EACCES,
   * EMFILE…): not gone, kept as it is.
   */
  private async lookAt(path: string): Promise<PathLook> {
    const slash = path.lastIndexOf('/');
    const outside = slash > 0 ? notRealFolder(this.repo.root, path.slice(0, slash)) : null;
    if (outside)
      return { stat: null, failed: outside.kind === 'unreadable' ? (outside.code ?? 'EIO') : null };
    try {
      return { stat: await lstat(join(this.repo.root, path)), failed: null };
    } catch (error) {
      return { stat: null, failed: (error as NodeJS.ErrnoException).code ?? 'EIO' };
    }
  }
}

/**
 * A scan's progress through hashing: files looked at of all found, and how many of those hashed are new or changed.
 * `recorded`: each file to hash with the hash the state had for it when the scan compared it (null: none), so that
 * telling a changed file needs no query per file (100,000 of them cost 250-600 ms of a first pass); without it
 * (a burst's files: nobody asks their count), none is counted.
 */
interface HashProgress {
  done: number;
  total: number;
  news: number;
  recorded?: Map<ScannedFile, string | null>;
}

/**
 * Whether a file is as the state last read it, without reading it. mtime and size alone were fooled by a
 * same-size edit whose mtime was set back (`touch -d`, `cp -p`, tar): ctime cannot be set by a user (any
 * write, chmod or utimes moves it to now), and an inode number that changed is a file replaced (a rename over
 * it) whose times may have been copied from the old one. Also what git compares in its index (ctime, ino).
 */
function isUnchanged(record: CachedStat | undefined, file: ScannedFile): boolean {
  return (
    record !== undefined &&
    record.localHash !== null &&
    record.size === file.size &&
    record.mtimeMs === file.mtimeMs &&
    record.ctimeMs === file.ctimeMs &&
    record.ino === file.ino
  );
}

/** Whether a regular file is at this path now (not a link, not a folder, not gone). */
function isFileOnDisk(path: string): boolean {
  return lstatSync(path, { throwIfNoEntry: false })?.isFile() === true;
}
