// Types of contained-fs.mjs (plain JavaScript, shared with the hash worker thread).

export type EntryKind = 'file' | 'folder' | 'symlink' | 'special';
/** Why an entry on disk is never synced. */
export type ContainmentWarning = 'symlink' | 'special';

interface EntryLike {
  isFile(): boolean;
  isDirectory(): boolean;
  isSymbolicLink(): boolean;
}

export function kindOf(entry: EntryLike): EntryKind;

export function warningOf(kind: EntryKind | 'missing'): ContainmentWarning | null;

export function notRealFolder(
  root: string,
  folder: string,
  known?: Set<string>,
): { path: string; kind: EntryKind | 'missing' } | null;

export function readContained(
  root: string,
  path: string,
  maxBytes: number,
  known?: Set<string>,
):
  | { bytes: Buffer | null; size: number; warning?: undefined; missing?: undefined }
  | { warning: ContainmentWarning; size: number; bytes?: undefined; missing?: undefined }
  | { missing: true; code: string; bytes?: undefined; warning?: undefined };
