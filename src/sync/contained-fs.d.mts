// Types of contained-fs.mjs (plain JavaScript, shared with the hash worker thread).

export type EntryKind = 'file' | 'folder' | 'symlink' | 'special';
/** Why an entry on disk is never synced. */
export type ContainmentWarning = 'symlink' | 'special';
/** Why a file is not read: never synced ('hardlink' too: its other name may be outside the repository). */
export type ReadWarning = ContainmentWarning | 'hardlink';

interface EntryLike {
  isFile(): boolean;
  isDirectory(): boolean;
  isSymbolicLink(): boolean;
}

export function kindOf(entry: EntryLike): EntryKind;

export function warningOf(kind: EntryKind | 'missing' | 'unreadable'): ContainmentWarning | null;

export function isGone(code: string): boolean;

export function notRealFolder(
  root: string,
  folder: string,
): { path: string; kind: EntryKind | 'missing' | 'unreadable'; code?: string } | null;

export function realRoot(root: string): string;

type Nothing = { bytes?: undefined; warning?: undefined; missing?: undefined; unreadable?: undefined };

export function readContained(
  root: string,
  path: string,
  maxBytes: number,
  rootReal?: string,
  readHardLinks?: boolean,
):
  | (Omit<Nothing, 'bytes'> & { bytes: Buffer | null; size: number; mtimeMs: number; links: number })
  | (Omit<Nothing, 'warning'> & { warning: ReadWarning; size: number })
  | (Omit<Nothing, 'missing'> & { missing: true; code: string })
  | (Omit<Nothing, 'unreadable'> & { unreadable: true; code: string });
