import { existsSync, readFileSync } from 'node:fs';
import { ensurePrivateFile, replaceFile } from '../host/index.ts';

// node:crypto loaded at its first use, not with this module: `flowsync status` loads the module and never uses it,
// and loading node:crypto costs a process 22 million instructions (about 15 ms).
const randomBytes = (size: number) => process.getBuiltinModule('node:crypto').randomBytes(size);

/*
 * A checkout's own id with a service, kept in the state and in a small private file beside it: the state
 * is a cache that is rebuilt when damaged, and a rebuilt state that made a new id would no longer know its own
 * versions on the service (its edits made meanwhile would all be conflicts). The file holds ids only: no path of
 * the user's files, no secret.
 */

/**
 * Where the ids of the state at `statePath` are kept beside it; null for a state in memory. One that is there is
 * taken to 0600, as the state is (an older flowsync, or a copy, may have left it readable by everyone).
 */
export function checkoutIdsFile(statePath: string): string | null {
  if (statePath === ':memory:') return null;
  const file = `${statePath}.checkouts.json`;
  if (existsSync(file)) ensurePrivateFile(file);
  return file;
}

/** The id kept for `key` (a root and a service) in `file`, or a new one, kept there from now on. */
export function keptCheckoutId(file: string | null, key: string): string {
  const ids = file === null ? {} : readIds(file);
  const kept = ids[key];
  if (kept !== undefined) return kept;
  const made = randomBytes(6).toString('hex');
  if (file !== null) replaceFile(file, `${JSON.stringify({ ...ids, [key]: made }, null, 2)}\n`, 0o600);
  return made;
}

/** The ids in the file: none when it is missing or not what this module writes (it is then written anew). */
function readIds(file: string): Record<string, string> {
  let parsed: unknown;
  try {
    parsed = JSON.parse(readFileSync(file, 'utf8'));
  } catch {
    return {};
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) return {};
  return Object.fromEntries(
    Object.entries(parsed).filter(
      (entry): entry is [string, string] => typeof entry[1] === 'string' && /^[0-9a-f]{12}$/.test(entry[1]),
    ),
  );
}
