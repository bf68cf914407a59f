// Containment, the one rule for every read of a repository (docs/architecture.md, "Containment"): a path is synced only if
// it is a regular file whose real path lies inside the repository's real root. No symbolic link below the root is
// ever followed, so every path reached by stepping through real folders from the root stays inside it; a link, a
// FIFO, a socket or a device is never entered or read, and becomes a warning with its own reason. A check of the
// folders at one moment is not enough (another user swapped one for a link to ~/.ssh and back, and the key was
// read in between): every read proves, on the descriptor it opened, that the file is the one inside the
// repository, before it reads a byte.
//
// Plain JavaScript so that the hash worker (a worker thread without the TypeScript loader) runs the very same code
// as the scanner and the engine; contained-fs.d.mts gives its types.
import {
  closeSync,
  constants,
  existsSync,
  fstatSync,
  lstatSync,
  openSync,
  readFileSync,
  readSync,
  readlinkSync,
  realpathSync,
} from 'node:fs';
import { join } from 'node:path';

/**
 * Read-only, never through a link in the last component (ELOOP instead), and never waiting on a FIFO: a FIFO
 * opened for reading blocks until a writer comes, and a read of it blocks until it writes.
 * (Windows has neither flag; there a link needs an administrator to be created.)
 */
const OPEN_FLAGS = constants.O_RDONLY | (constants.O_NOFOLLOW ?? 0) | (constants.O_NONBLOCK ?? 0);

/** What an entry is, for the rule, from an lstat, an fstat or a Dirent: a file, a folder, or never synced. */
export function kindOf(entry) {
  if (entry.isFile()) return 'file';
  if (entry.isDirectory()) return 'folder';
  if (entry.isSymbolicLink()) return 'symlink';
  return 'special';
}

/** The warning of an entry that is never synced ('symlink' or 'special'), null for a file or a folder. */
export function warningOf(kind) {
  return kind === 'symlink' || kind === 'special' ? kind : null;
}

/**
 * Whether an error code of a read means the entry is gone: only "not found" (ENOENT), "a folder on the way is
 * not a folder" (ENOTDIR) and "it is a folder now" (EISDIR, for a file). Anything else (EACCES, EMFILE, ENFILE,
 * EIO…) means "unreadable now": the entry may well be there, and taking it as gone deleted a whole flow on the
 * service when the agent ran out of file descriptors.
 */
export function isGone(code) {
  return code === 'ENOENT' || code === 'ENOTDIR' || code === 'EISDIR';
}

function codeOf(error) {
  return error && error.code ? String(error.code) : 'EIO';
}

/**
 * The first of the folders on the way from the root to `folder` (a path relative to the root, `/`-separated;
 * `folder` itself included) that is not a real folder, with what it is instead ('missing' when it is not there,
 * 'unreadable' with the error's `code` when it could not be looked at); null when each one is. lstat never
 * follows the last component, and each component before it was found to be a real folder, so no link is
 * followed. This is a check at one moment only: a read proves containment on the open file (readContained).
 */
export function notRealFolder(root, folder) {
  if (folder === '') return null;
  const segments = folder.split('/');
  for (let depth = 1; depth <= segments.length; depth++) {
    const prefix = segments.slice(0, depth).join('/');
    let stat;
    try {
      stat = lstatSync(join(root, prefix));
    } catch (error) {
      const code = codeOf(error);
      return isGone(code) ? { path: prefix, kind: 'missing' } : { path: prefix, kind: 'unreadable', code };
    }
    const kind = kindOf(stat);
    if (kind !== 'folder') return { path: prefix, kind };
  }
  return null;
}

/**
 * Where the OS names the file behind a descriptor (Linux, and Android): the proof that an open file is the one
 * inside the repository. Elsewhere (macOS, Windows, the BSDs) the folders on the way are compared before and
 * after the open instead (folderIds, in provenInside).
 */
const FD_PATHS = existsSync('/proc/self/fd') ? '/proc/self/fd' : null;

/** A repository root's real path, the prefix every contained file's real path starts with. */
export function realRoot(root) {
  return realpathSync.native(root);
}

/**
 * Whether the open file `fd` is the file at `path` inside the repository whose real root is `rootReal`, the way
 * it was reached through real folders. Linux: the descriptor's real path must be exactly the expected one, so a
 * folder on the way that was a link at the moment of the open (for microseconds: the report's racer held it
 * for 5 ms) shows as a path outside. Elsewhere: each folder on the way must be the same folder (device and inode)
 * before and after the open, and the open file the file now at the path; this narrows the window to a swap and
 * a swap back within one open, which a racer can still win (documented in the README's security model).
 */
function provenInside(fd, rootReal, root, path, before) {
  if (FD_PATHS !== null) {
    let actual;
    try {
      actual = readlinkSync(`${FD_PATHS}/${fd}`);
    } catch {
      return false;
    }
    return actual === `${rootReal}/${path}`;
  }
  const after = folderIds(root, path);
  if (after === null || before === null || after.join() !== before.join()) return false;
  try {
    const opened = fstatSync(fd);
    const there = lstatSync(join(root, path));
    return opened.dev === there.dev && opened.ino === there.ino;
  } catch {
    return false;
  }
}

/** Device and inode of each folder on the way to `path` (itself excluded); null when one is not a real folder. */
function folderIds(root, path) {
  const segments = path.split('/');
  const ids = [];
  for (let depth = 0; depth < segments.length; depth++) {
    try {
      const stat = lstatSync(depth === 0 ? root : join(root, segments.slice(0, depth).join('/')));
      if (!stat.isDirectory()) return null;
      ids.push(`${stat.dev}:${stat.ino}`);
    } catch {
      return null;
    }
  }
  return ids;
}

/**
 * The whole of an open regular file whose fstat said `size`: one read of `size + 1` bytes, which returns less than
 * that only at the end of the file. readFileSync(fd) stats the descriptor again and reads until a read returns 0,
 * two more system calls a file (each 10-25 µs on a loaded VM: a third of the hasher's time at 100,000 small files).
 * A file that grew since its fstat is read on to its end, as readFileSync would.
 */
function readWhole(fd, size) {
  const buffer = Buffer.allocUnsafe(size + 1);
  const read = readSync(fd, buffer, 0, size + 1, null);
  if (read <= size) return buffer.subarray(0, read);
  return Buffer.concat([buffer, readFileSync(fd)]);
}

/**
 * Reads the file at `path` (relative to `root`) under the rule, at most `maxBytes` of it:
 * - `{ bytes, size, mtimeMs, links }` for a regular file (`bytes` null when it is larger than `maxBytes`: not read at
 *   all; `links` its hard links, more than 1 only with `readHardLinks`);
 * - `{ warning, size }` for what is never read: a link, a FIFO, socket or device, or a file with more than one
 *   hard link ('hardlink': its other name may be anywhere, another user's link to the victim's 0600 key);
 * - `{ missing, code }` when there is no file inside the repository at that path (gone, or below a link);
 * - `{ unreadable, code }` when it could not be read now (EACCES, EMFILE, EIO…, or a folder on the way swapped
 *   for a link during the open): not gone, read again later.
 * `readHardLinks`: for what is read and never sent (a .gitignore: skipping it would send what it ignores).
 * `rootReal` is the root's real path (realRoot), computed once per batch of reads; nothing else is cached
 * between reads, so every file's way is proved on its own open descriptor before a byte of it is read.
 */
export function readContained(root, path, maxBytes, rootReal = realRoot(root), readHardLinks = false) {
  // Off Linux the folders are compared around the open; on Linux the descriptor's path proves it after.
  const before = FD_PATHS === null ? folderIds(root, path) : null;
  let fd;
  try {
    fd = openSync(join(root, path), OPEN_FLAGS);
  } catch (error) {
    const code = codeOf(error);
    // A folder on the way that is not a real folder (a link, a file): nothing of the repository is there.
    const slash = path.lastIndexOf('/');
    const outside = slash > 0 ? notRealFolder(root, path.slice(0, slash)) : null;
    if (outside && outside.kind === 'unreadable') return { unreadable: true, code: outside.code };
    if (outside) return { missing: true, code: outside.kind === 'missing' ? 'ENOENT' : 'ENOTDIR' };
    // ELOOP: the last component is a link (EMLINK on FreeBSD). ENXIO: a socket, or a FIFO on some systems.
    if (code === 'ELOOP' || code === 'EMLINK') return { warning: 'symlink', size: 0 };
    if (code === 'ENXIO' || code === 'EOPNOTSUPP') return { warning: 'special', size: 0 };
    return isGone(code) ? { missing: true, code } : { unreadable: true, code };
  }
  try {
    const stat = fstatSync(fd);
    const kind = kindOf(stat);
    if (!provenInside(fd, rootReal, root, path, before)) {
      // Reached through a link: a folder on the way is one now (gone, as below any link), or was one for the
      // moment of the open (a race: read again later, and then it is whatever the folder is by then).
      const slash = path.lastIndexOf('/');
      const outside = slash > 0 ? notRealFolder(root, path.slice(0, slash)) : null;
      if (outside && outside.kind !== 'unreadable')
        return { missing: true, code: outside.kind === 'missing' ? 'ENOENT' : 'ENOTDIR' };
      return { unreadable: true, code: 'ESTALE' };
    }
    if (kind === 'folder') return { missing: true, code: 'EISDIR' };
    if (kind !== 'file') return { warning: warningOf(kind), size: 0 };
    if (stat.nlink > 1 && !readHardLinks) return { warning: 'hardlink', size: stat.size };
    // Not read at all when too large: a 2 GB video in a flow folder must not stall the agent.
    if (stat.size > maxBytes) return { bytes: null, size: stat.size };
    const bytes = readWhole(fd, stat.size);
    return {
      bytes: bytes.length > maxBytes ? null : bytes,
      size: bytes.length,
      mtimeMs: stat.mtimeMs,
      links: stat.nlink,
    };
  } catch (error) {
    const code = codeOf(error);
    return isGone(code) ? { missing: true, code } : { unreadable: true, code };
  } finally {
    closeSync(fd);
  }
}
