import { mkdirSync, realpathSync, unlinkSync } from 'node:fs';
import { join } from 'node:path';
import { replaceFile } from '../host/index.ts';
import { unsafePathReason } from '../protocol/index.ts';
import { notRealFolder, type EntryKind } from './contained-fs.mjs';

/** What stands, instead of a real folder, on the way to a file the agent would write in a repository. */
export interface NotContained {
  path: string;
  /**
   * `missing`: a folder made a moment ago is gone again (removed meanwhile); `unreadable`: it could not be looked
   * at now (`code`: EACCES, EMFILE…), so nothing is written through it; `unsafe`: the path itself is one the
   * agent never writes (`reason`: a `..` segment, a name in `.git`…).
   */
  kind: EntryKind | 'missing' | 'unreadable' | 'unsafe';
  code?: string;
  reason?: string;
}

/**
 * Why the agent never writes at this path of a repository, or null. The wire's rule (no `..`, `.`, empty segment,
 * absolute, `\\`, NUL or control character): `flows/a/../../../.bashrc` passed the folder check below (each prefix
 * is a real folder) and `join` took it to the home folder. And nothing in git's own folder, at any depth: a hook
 * or a config there runs code at the next git command.
 */
function unsafeToWrite(path: string): string | null {
  const reason = unsafePathReason(path);
  if (reason !== null) return reason;
  if (path.split('/').some((segment) => segment.toLowerCase() === '.git')) return "is in a repository's .git";
  return null;
}

/**
 * Whether the folder made for a file is where it should be: its real path is the root's real path and the folder.
 * A second proof, after the checks on the way, so that a mistake above (a path not checked, a rule changed) still
 * cannot become a write outside the repository.
 */
function landsInside(root: string, folder: string): boolean {
  const rootReal = realpathSync.native(root);
  const expected = folder === '' ? rootReal : `${rootReal}/${folder}`;
  try {
    return realpathSync.native(join(root, folder)) === expected;
  } catch {
    return false;
  }
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
export function writeContained(root: string, path: string, data: string | Buffer): NotContained | null {
  const unsafe = unsafeToWrite(path);
  if (unsafe !== null) return { path, kind: 'unsafe', reason: unsafe };
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
  if (!landsInside(root, folder))
    return { path: folder, kind: 'unsafe', reason: 'is not inside the repository' };
  replaceFile(join(root, path), data);
  return null;
}

/** What stands in the way of a write, in words: "flows/a is a symlink", "flows/a/../x has a .. segment". */
export function notContainedReason(outside: NotContained): string {
  if (outside.kind === 'unsafe')
    return `${outside.path} ${outside.reason ?? 'is not a path the agent writes'}`;
  if (outside.kind === 'unreadable') return `${outside.path} could not be read (${outside.code ?? 'EIO'})`;
  if (outside.kind === 'missing') return `${outside.path} was removed meanwhile`;
  return `${outside.path} is a ${outside.kind === 'special' ? 'special file' : outside.kind}, not a folder of the repository`;
}

/**
 * A file of the repository made `content` (writeContained), or removed when `content` is null: the service's
 * version put on disk, or a version restored. A removal under something that is not a real folder of the
 * repository removes nothing (false); a write that cannot be contained throws, naming what stands in the way.
 */
export function replaceContained(root: string, path: string, content: string | null): boolean {
  const unsafe = unsafeToWrite(path);
  if (unsafe !== null) throw new NotWritten(path, `${path} ${unsafe}`);
  if (content === null) {
    const folder = path.slice(0, Math.max(0, path.lastIndexOf('/')));
    if (notRealFolder(root, folder) !== null || !landsInside(root, folder)) return false;
    try {
      unlinkSync(join(root, path));
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
    }
    return true;
  }
  const outside = writeContained(root, path, content);
  if (outside !== null) throw new NotWritten(path, notContainedReason(outside));
  return true;
}

/** A file the agent would write in a repository, and why it did not: a per-file line, the others go on. */
export class NotWritten extends Error {
  override readonly name = 'NotWritten';
  constructor(
    readonly file: string,
    readonly why: string,
  ) {
    super(`${file} was not written: ${why}`);
  }
}
