import { chmodSync, closeSync, lstatSync, mkdirSync, openSync, readdirSync, statSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { openExclusive } from './exclusive-files.ts';

// What flowsync keeps names every synced flow, its files' content and the tracker's tasks: this user's only.
const PRIVATE_FOLDER = 0o700;
const PRIVATE_FILE = 0o600;

/** Takes an existing file or folder down to `mode`; a missing one is left missing. */
function tighten(path: string, mode: number): void {
  let current: number;
  try {
    current = statSync(path).mode & 0o777;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return;
    throw error;
  }
  if (current !== mode) chmodSync(path, mode);
}

/**
 * A folder of flowsync's own (its data or config folder): created 0700, or taken to 0700 when an older flowsync
 * left it 0755.
 */
export function ensurePrivateFolder(path: string): void {
  mkdirSync(path, { recursive: true, mode: PRIVATE_FOLDER });
  tighten(path, PRIVATE_FOLDER);
}

/**
 * A file flowsync writes (a database, a log, the config): created 0600 (missing folders 0700), or taken to
 * 0600 when it already exists with a looser mode. Called before a SQLite database is opened, it also takes the
 * `-wal` and `-shm` files an earlier run left next to it to 0600; the ones SQLite creates later get the database
 * file's mode (measured with better-sqlite3: a 0600 database gets 0600 ones, a 0644 one 0644 ones).
 */
export function ensurePrivateFile(path: string): void {
  mkdirSync(dirname(path), { recursive: true, mode: PRIVATE_FOLDER });
  closeSync(openSync(path, 'a', PRIVATE_FILE));
  for (const file of [path, `${path}-wal`, `${path}-shm`]) tighten(file, PRIVATE_FILE);
}

/**
 * A new private file (0600) where nothing is, not even a link (EEXIST otherwise), open for writing: its descriptor,
 * for a file written in parts (`flowsync service export`, which holds token digests and every flow's content).
 */
export function openPrivateExclusive(path: string): number {
  return openExclusive(path, PRIVATE_FILE);
}

/** A file or folder of flowsync's own whose mode lets other users in, and the mode it should have. */
export interface LooseMode {
  path: string;
  mode: number;
  expected: number;
}

/**
 * The folder and the files directly in it whose modes let other users of the machine read or write them (any
 * group or other bit), for `flowsync doctor`: nothing is changed here (the agent's next start tightens them, as
 * ensurePrivateFolder and ensurePrivateFile do). Links are not followed: a link's own mode means nothing. An
 * absent folder has nothing loose.
 */
export function looseModes(folder: string): LooseMode[] {
  const loose: LooseMode[] = [];
  const look = (path: string, expected: number) => {
    const stat = lstatSync(path, { throwIfNoEntry: false });
    if (!stat || stat.isSymbolicLink()) return stat;
    if ((stat.mode & 0o077) !== 0) loose.push({ path, mode: stat.mode & 0o777, expected });
    return stat;
  };
  const stat = look(folder, PRIVATE_FOLDER);
  if (!stat?.isDirectory()) return loose;
  for (const entry of readdirSync(folder, { withFileTypes: true })) {
    if (entry.isFile()) look(join(folder, entry.name), PRIVATE_FILE);
    else if (entry.isDirectory()) look(join(folder, entry.name), PRIVATE_FOLDER);
  }
  return loose;
}
