import { closeSync, openSync, rmSync, writeSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { ensurePrivateFolder } from './private-files.ts';

/**
 * Why a file of flowsync's own (the state, the service's database, a log, the lock) could not be written: the
 * disk is full, the file system is read-only, the folder is not ours to write, or the disk fails. The one reading
 * of such errors, whether they come from Node (`code` ENOSPC…) or from SQLite through better-sqlite3 (`code`
 * SQLITE_FULL…): the sync engine keeps its work waiting on them, and the agent's error classifier says them in
 * one line.
 */
export type StorageFault = 'full' | 'read-only' | 'denied' | 'failing';

const BY_CODE: Record<string, StorageFault> = {
  ENOSPC: 'full',
  EDQUOT: 'full',
  SQLITE_FULL: 'full',
  EROFS: 'read-only',
  SQLITE_READONLY: 'read-only',
  EACCES: 'denied',
  EPERM: 'denied',
  SQLITE_CANTOPEN: 'denied',
  SQLITE_PERM: 'denied',
  EIO: 'failing',
  SQLITE_IOERR: 'failing',
};

/** The fault an error names, or null when it is not about writing to the disk. */
export function storageFaultOf(error: unknown): StorageFault | null {
  const code = (error as { code?: unknown } | null)?.code;
  if (typeof code !== 'string') return null;
  // SQLite's extended codes name the primary one first: SQLITE_READONLY_DBMOVED, SQLITE_IOERR_WRITE…
  return BY_CODE[code] ?? BY_CODE[code.replace(/^(SQLITE_[A-Z]+)_.*$/, '$1')] ?? null;
}

const SAID: Record<StorageFault, string> = {
  full: 'is full',
  'read-only': 'is read-only',
  denied: 'cannot be written (permission denied)',
  failing: 'cannot be written (a disk error)',
};

const TO_DO: Record<StorageFault, string> = {
  full: 'free some space on its disk',
  'read-only': 'make it writable (remount it read-write)',
  denied: 'give your user write access to it',
  failing: 'check the disk',
};

/** "/home/me/.local/share/flowsync is full: free some space on its disk." */
export function storageFaultLine(fault: StorageFault, folder: string): string {
  return `${folder} ${SAID[fault]}: ${TO_DO[fault]}.`;
}

/** "the data folder /home/me/.local/share/flowsync is full" */
export function describeStorageFault(fault: StorageFault, folder: string): string {
  return `the data folder ${folder} ${SAID[fault]}`;
}

/** What a person can do about it: "free some space on its disk". */
export function storageFaultRemedy(fault: StorageFault): string {
  return TO_DO[fault];
}

/** The folder a Node error names (its `path`), for a message; null when it names none. */
export function folderOf(error: unknown): string | null {
  const path = (error as { path?: unknown } | null)?.path;
  return typeof path === 'string' ? dirname(path) : null;
}

/**
 * Whether a folder of flowsync's own takes a write now (a byte written and removed): null, or what is wrong. Also
 * what SQLite leaves out: on a file system turned read-only under an open database it says SQLITE_IOERR_WRITE, and
 * this says EROFS.
 */
export function folderFault(folder: string): StorageFault | null {
  const probe = join(folder, `.write-check-${process.pid}`);
  try {
    ensurePrivateFolder(folder);
    const fd = openSync(probe, 'w', 0o600);
    try {
      writeSync(fd, 'x');
    } finally {
      closeSync(fd);
    }
    rmSync(probe, { force: true });
    return null;
  } catch (error) {
    const fault = storageFaultOf(error);
    if (fault === null) throw error;
    try {
      rmSync(probe, { force: true }); // created before the write failed (a full disk)
    } catch {
      // Read-only: it was never created.
    }
    return fault;
  }
}
