import { closeSync, constants, fsyncSync, openSync, renameSync, unlinkSync, writeSync } from 'node:fs';

// node:crypto loaded at its first use, not with this module: `flowsync status` loads the module and never uses it,
// and loading node:crypto costs a process 22 million instructions (about 15 ms).
const randomBytes = (size: number) => process.getBuiltinModule('node:crypto').randomBytes(size);

/**
 * Created only where nothing is, not even a link: a name taken by anything (a link a cloned repository ships at
 * the name, pointing at ~/.bashrc or at a file not there yet) is EEXIST, never written through.
 * (Windows has no O_NOFOLLOW; O_EXCL alone refuses an existing link there, and making one needs an administrator.)
 */
const CREATE_ONLY = constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | (constants.O_NOFOLLOW ?? 0);

/** A new file at `path`, open for writing (its descriptor); EEXIST when anything is at that name. */
export function openExclusive(path: string, mode = 0o666): number {
  return openSync(path, CREATE_ONLY, mode);
}

/**
 * Writes a new file at `path` and flushes it to disk; EEXIST when anything is at that name. `mode` is the
 * usual one (0o666 less the umask) unless given.
 */
export function createExclusive(path: string, data: string | Buffer, mode = 0o666): void {
  const fd = openExclusive(path, mode);
  let written = false;
  try {
    const bytes = typeof data === 'string' ? Buffer.from(data, 'utf8') : data;
    for (let done = 0; done < bytes.length;) done += writeSync(fd, bytes, done, bytes.length - done);
    fsyncSync(fd); // before the rename, so that a crash cannot leave the new name with empty content
    written = true;
  } finally {
    closeSync(fd);
    if (!written) unlinkSync(path);
  }
}

/**
 * A temporary name next to `path` that nobody can guess, so that nothing can be planted at it in advance (a name
 * made of the pid was: a clone ships one link per possible pid in seconds).
 */
export function temporaryNameFor(path: string): string {
  return `${path}.${randomBytes(8).toString('hex')}.tmp`;
}

/**
 * Replaces the file at `path` atomically: a crash leaves the old file or the new one, never half of one. The new
 * content goes to a fresh file under a random name (createExclusive), which is then renamed over `path`; rename
 * replaces a link at `path` itself rather than following it. Every file flowsync writes by temporary file and
 * rename goes through here, so the rule is written once. The folder is the caller's to check: for a repository,
 * that it is a real folder inside it (src/sync's writeContained).
 */
export function replaceFile(path: string, data: string | Buffer, mode = 0o666): void {
  const temporary = temporaryNameFor(path);
  createExclusive(temporary, data, mode);
  try {
    renameSync(temporary, path);
  } catch (error) {
    unlinkSync(temporary);
    throw error;
  }
}
