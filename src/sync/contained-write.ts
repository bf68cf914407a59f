import { mkdirSync, unlinkSync } from 'node:fs';
import { join } from 'node:path';
import { replaceFile } from '../host/index.ts';
import { notRealFolder, type EntryKind } from './contained-fs.mjs';

/** What stands, instead of a real folder, on the way to a file the agent would write in a repository. */
export interface NotContained {
  path: string;
  /**
   * `missing`: a folder made a moment ago is gone again (removed meanwhile); `unreadable`: it could not be looked
   * at now (`code`: EACCES, EMFILE…), so nothing is written through it.
   */
  kind: EntryKind | 'missing' | 'unreadable';
  code?: string;
}

/**
 * Writes `path` (relative to the repository root, `/`-separated) under the containment rule, the way every file
 * the agent writes in a repository is written: its folders are made one at a time by a plain `mkdir` (which
 * never follows a link: a link at the name is EEXIST) and each is checked to be a real folder inside the
 * repository; the file itself is replaced atomically, created under a random name with O_EXCL|O_NOFOLLOW and
 * renamed (replaceFile), so no link the repository ships, at the file's name or any temporary one, is written
 * through. Returns null when written, or the entry on the way that is not a real folder (nothing written).
 * What this does not close, as for reads (contained-fs.mjs): a folder swapped for a link in the microseconds
 * between its check and the write, which only a process already running as the user can do.
 */
export function writeContained(root: string, path: string, data: string): NotContained | null {
  const slash = path.lastIndexOf('/');
  const folder = slash > 0 ? path.slice(0, slash) : '';
  const segments = folder === '' ? [] : folder.split('/');
  for (let depth = 1; depth <= segments.length; depth++) {
    const prefix = segments.slice(0, depth).join('/');
    const outside = notRealFolder(root, prefix);
    if (outside?.kind === 'missing') {
      try {
        mkdirSync(join(root, prefix));
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
      }
    } else if (outside) {
      return outside;
    }
  }
  const outside = notRealFolder(root, folder);
  if (outside) return outside;
  replaceFile(join(root, path), data);
  return null;
}

/**
 * A file of the repository made `content` (writeContained), or removed when `content` is null: the service's
 * version put on disk, or a version restored. A removal under something that is not a real folder of the
 * repository removes nothing (false); a write that cannot be contained throws, naming what stands in the way.
 */
export function replaceContained(root: string, path: string, content: string | null): boolean {
  if (content === null) {
    const folder = path.slice(0, path.lastIndexOf('/'));
    if (notRealFolder(root, folder) !== null) return false;
    try {
      unlinkSync(join(root, path));
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
    }
    return true;
  }
  const outside = writeContained(root, path, content);
  if (outside !== null)
    throw new Error(`${path} was not written: ${outside.path} is not a folder of the repository`);
  return true;
}
