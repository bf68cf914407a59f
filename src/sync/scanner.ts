import { lstatSync, readdirSync, type Dirent } from 'node:fs';
import { join, sep } from 'node:path';
import { setImmediate as yieldToEventLoop } from 'node:timers/promises';
import { isGone, kindOf, notRealFolder, warningOf, type ContainmentWarning } from './contained-fs.mjs';
import type { FlowFileLocation, FlowLayout } from './flow-layout.ts';
import type { IgnoreRules } from './ignore-rules.ts';

/** A file found on disk, with what the stat cache needs (mtime and size, and ctime and inode: see isUnchanged). */
export interface ScannedFile {
  flowPath: string;
  path: string;
  size: number;
  mtimeMs: number;
  ctimeMs: number;
  ino: number;
}

/** The part of a stat the cache compares. */
export function cacheKeyOf(stat: { size: number; mtimeMs: number; ctimeMs: number; ino: number }) {
  return { size: stat.size, mtimeMs: stat.mtimeMs, ctimeMs: stat.ctimeMs, ino: stat.ino };
}

/**
 * A link, FIFO, socket or device found where a flow's file, a flow or a flow root would be: never synced. Or a
 * name that is not UTF-8 (it cannot be sent as the JSON string the service stores, and Node's strings replace it,
 * so it was skipped without a word).
 */
export interface RefusedEntry extends FlowFileLocation {
  /** `ignored`: a file synced before that a .gitignore line ignores now (reconciler.ts: kept, not gone). */
  warning: ContainmentWarning | 'non-utf8-name' | 'ignored';
}

/** UTF-8 as the service stores names: a byte that is not is an error, not a replacement character. */
const utf8 = new TextDecoder('utf-8', { fatal: true });

/** Entries looked at between two yields to the event loop: a few milliseconds of work each. */
const SLICE = 2000;

/** A part of a scan: up to SLICE files with their stat, and the entries refused (all of them, in the first). */
export interface ScanSlice {
  files: ScannedFile[];
  /** Each file's path in the repository (`flowPath/path`), as the walk found it: the rescan's key for it. */
  keys: string[];
  refused: RefusedEntry[];
  /** Files found on disk in all, known from the first slice on (the walk lists names before it stats them). */
  total: number;
  /**
   * Folders that could not be listed and files that could not be looked at, now (EACCES, EMFILE, EIO…; repository
   * paths): not gone. What the state knows below them stays as it is.
   */
  unreadable: string[];
}

/**
 * Walks the flow roots (or folders below them) and lists every file of every flow, skipping ignored folders
 * without entering them. It yields the files in slices, so that a caller never holds the whole tree: the walk
 * keeps only the names (7 MB at 100,000 files), each slice's stats are looked at and dropped. Under the containment rule (contained-fs.mjs): a symbolic link is never followed, as
 * git and Syncthing do not, and neither it nor a FIFO, socket or device is read; each is listed as refused, so
 * that it is reported. A loop of links costs nothing: no link is entered.
 *
 * The walk uses the synchronous calls in slices, yielding between them: for 100,000 files that is 0.4 s against
 * 1.5 s through the thread pool, and the event loop still answers in between.
 */
export async function* scanFlows(
  repoRoot: string,
  layout: FlowLayout,
  rules: IgnoreRules,
  under: readonly string[] = layout.roots,
): AsyncGenerator<ScanSlice> {
  const files: string[] = [];
  const refused: RefusedEntry[] = [];
  const unreadable: string[] = [];
  const refuse = (path: string, warning: RefusedEntry['warning'] | null, fallback = path) => {
    const place = placeOf(layout, path) ?? placeOf(layout, fallback);
    if (warning && place) refused.push({ ...place, warning });
  };
  // The folders to walk must be reached through real folders too: `flows` itself may be a link.
  const folders: string[] = [];
  for (const folder of under) {
    const outside = notRealFolder(repoRoot, folder);
    if (outside === null) folders.push(folder);
    else if (outside.kind === 'unreadable') unreadable.push(folder);
    else refuse(outside.path, warningOf(outside.kind), folder);
  }
  let budget = SLICE;
  while (folders.length > 0) {
    const folder = folders.pop()!;
    let listing: Listing;
    try {
      listing = listFolder(join(repoRoot, folder));
    } catch (error) {
      // Gone: what is not there is not in the flow. Unreadable (a folder made 000, no file descriptor left): its
      // files are not gone, and taking them as gone deleted them on the service.
      if (!isGone((error as NodeJS.ErrnoException).code ?? 'EIO')) unreadable.push(folder);
      continue;
    }
    const { entries, names, notUtf8 } = listing;
    if (!names.includes('.gitignore')) rules.listedWithout(folder);
    for (let index = 0; index < entries.length; index++) {
      const entry = entries[index]!;
      const name = names[index]!;
      const path = folder === '' ? name : `${folder}/${name}`;
      const kind = kindOf(entry);
      if (notUtf8.has(index)) {
        if (!rules.ignores(path) && !rules.ignores(`${path}/`)) refuse(path, 'non-utf8-name');
      } else if (kind === 'folder') {
        if (!rules.ignores(`${path}/`)) folders.push(path);
      } else if (kind === 'file') {
        if (!rules.ignores(path) && layout.inFlow(path)) files.push(path);
      } else if (!rules.ignores(path) && !rules.ignores(`${path}/`)) {
        refuse(path, warningOf(kind));
      }
    }
    budget -= entries.length;
    if (budget <= 0) {
      budget = SLICE;
      await yieldToEventLoop();
    }
  }

  const total = files.length;
  // Each file's path is the root's and the walk's names joined by hand: path.join normalizes every one of them
  // again (50 of 500 ms at 100,000 files), and a name from readdir is never `.`, `..` or has a separator.
  const base = join(repoRoot, sep);
  let start = 0;
  do {
    const scanned: ScannedFile[] = [];
    const keys: string[] = [];
    const unlooked: string[] = start === 0 ? unreadable : [];
    for (const path of files.slice(start, start + SLICE)) {
      let stat;
      try {
        stat = lstatSync(base + path);
      } catch (error) {
        if (!isGone((error as NodeJS.ErrnoException).code ?? 'EIO')) unlooked.push(path);
        continue;
      }
      const location = layout.locate(path);
      if (!stat.isFile() || !location) continue;
      // One object per file, not three (the location and the stat's part spread into a third): at 100,000 files
      // the scan's garbage is most of a restart's collections.
      const { size, mtimeMs, ctimeMs, ino } = stat;
      scanned.push({ flowPath: location.flowPath, path: location.path, size, mtimeMs, ctimeMs, ino });
      keys.push(path);
    }
    yield { files: scanned, keys, refused: start === 0 ? refused : [], total, unreadable: unlooked };
    start += SLICE;
    await yieldToEventLoop();
  } while (start < total);
}

/** A folder's entries, each name as text, and which of them are not UTF-8 (their text has replacement characters). */
interface Listing {
  entries: (Dirent<string> | Dirent<Buffer>)[];
  names: string[];
  notUtf8: ReadonlySet<number>;
}

const NONE: ReadonlySet<number> = new Set();

/**
 * A folder's entries. Listed as text first: names as bytes (a Buffer each) made the walk of 100,000 files 2.4× as
 * long (245 against 100 ms). A name that is not UTF-8 comes out of Node's decoding with U+FFFD in it, so only a
 * folder with that character in some name is listed again as bytes, to tell such a name from one that has the
 * character itself.
 */
function listFolder(absolute: string): Listing {
  const entries = readdirSync(absolute, { withFileTypes: true });
  const names = entries.map((entry) => entry.name);
  if (!names.some((name) => name.includes('\uFFFD'))) return { entries, names, notUtf8: NONE };
  const asBytes = readdirSync(absolute, { withFileTypes: true, encoding: 'buffer' });
  const notUtf8 = new Set<number>();
  const decoded = asBytes.map((entry, index) => {
    const name = nameOf(entry.name);
    if (!name.utf8) notUtf8.add(index);
    return name.text;
  });
  return { entries: asBytes, names: decoded, notUtf8 };
}

/** A name read as bytes: its text, and whether those bytes are UTF-8 (else the text has replacement characters). */
function nameOf(bytes: Buffer): { text: string; utf8: boolean } {
  try {
    return { text: utf8.decode(bytes), utf8: true };
  } catch {
    return { text: bytes.toString('utf8'), utf8: false };
  }
}

/**
 * Where an entry that is not synced is listed: as a file of its flow (`flows/a` + `key`), or, standing where a
 * flow or a flow root would be, as that folder with an empty path (`flows/b` + ``); null outside every flow root.
 */
export function placeOf(layout: FlowLayout, path: string): FlowFileLocation | null {
  const location = layout.locate(path);
  if (location) return location;
  if (layout.flowOfDirectory(path) !== null || layout.roots.includes(path))
    return { flowPath: path, path: '' };
  return null;
}
