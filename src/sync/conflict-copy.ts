import { isUtf8 } from 'node:buffer';
import { createHash } from 'node:crypto';
import type { RemoteClient } from '../client/index.ts';
import { MAX_FILE_BYTES, printable } from '../protocol/index.ts';
import { readContained } from './contained-fs.mjs';
import { NotWritten, notContainedReason, writeContained } from './contained-write.ts';

/*
 * Nothing local is destroyed by "take the service's version": before the service's bytes are written
 * over a file, what is on disk, when it is an edit not sent (neither the version last synced here nor the service's),
 * is kept. One rule, said in the command's line and the window: in the service's history, as a version marked as
 * this checkout's conflict copy, when the service keeps such copies (flowsync's own, `keep_copy`); else beside the
 * file, as `name.conflict-<time>.ext`, which the agent never syncs (ignore-rules.ts), so it stays this checkout's.
 * Dropbox keeps "(conflicted copy)", Syncthing `.sync-conflict-…`: the same promise.
 */

/** Where a file's local bytes were kept: a version of the service's history, or a file beside it. */
export type KeptCopy = { version: number; beside?: undefined } | { beside: string; version?: undefined };

/** The name of a copy beside a file: `build.yml` → `build.conflict-20261126T170102Z.yml` (its type stays last). */
export function conflictCopyName(path: string, now: Date): string {
  const time = now
    .toISOString()
    .replace(/[-:]/g, '')
    .replace(/\.\d+Z$/, 'Z');
  const slash = path.lastIndexOf('/');
  const name = path.slice(slash + 1);
  const dot = name.lastIndexOf('.');
  const [stem, type] = dot > 0 ? [name.slice(0, dot), name.slice(dot)] : [name, ''];
  return `${path.slice(0, slash + 1)}${stem}.conflict-${time}${type}`;
}

/** The copies beside files, as an ignore pattern: never synced (they are this checkout's, not the team's). */
export const CONFLICT_COPY_PATTERN =
  '*.conflict-[0-9][0-9][0-9][0-9][0-9][0-9][0-9][0-9]T[0-9][0-9][0-9][0-9][0-9][0-9]Z*';

/** What keeping a copy needs: the repository, the client (null: keep beside), and whether it keeps copies. */
export interface CopyKeeper {
  root: string;
  owner: string;
  name: string;
  writer?: string;
  client: RemoteClient;
  /** The service keeps conflict copies in its history (capabilities `conflict_copies`). */
  inHistory: boolean;
}

/**
 * Keeps the bytes at `flowPath/path` (relative to the root) before they are replaced, unless there is nothing to
 * lose: no file there, or its bytes are the version last synced here (`baseHash`: the service's history has it) or
 * the service's own (`serviceHash`). Returns where it was kept, or null; throws NotWritten when it could not be kept
 * (the file is then not replaced).
 */
export async function keepLocalBytes(
  keeper: CopyKeeper,
  flowPath: string,
  path: string,
  hashes: { baseHash: string | null; serviceHash: string | null },
  now = new Date(),
): Promise<KeptCopy | null> {
  const relative = `${flowPath}/${path}`;
  const read = readContained(keeper.root, relative, 64 * MAX_FILE_BYTES, undefined, true);
  if (read.missing) return null;
  if (read.warning !== undefined || read.unreadable || read.bytes === null)
    throw new NotWritten(
      relative,
      `what is on disk could not be read to keep a copy (${read.warning ?? (read.unreadable ? read.code : 'too large')}): not replaced`,
    );
  const hash = createHash('sha256').update(read.bytes).digest('hex');
  if (hash === hashes.baseHash || hash === hashes.serviceHash) return null;
  const notSent = notSendable(read.bytes, read.links);
  // A hard link is neither sent nor copied (a copy beside it would be a file anyone may read, of what may be a 0600
  // key): left as it is, and said.
  if (notSent === 'hardlink')
    throw new NotWritten(
      relative,
      'it is a hard link, which is never sent (its other name may be anywhere): not replaced, your bytes stay here',
    );
  const text = read.bytes.toString('utf8');
  if (keeper.inHistory && notSent === null) {
    const { version } = await keeper.client.flowDef.keepCopy(
      { repo_owner: keeper.owner, repo_name: keeper.name, flow_path: flowPath, path, content: text, hash },
      keeper.writer === undefined ? {} : { writer: keeper.writer },
    );
    // Read back before anything is written over the file: a number is the service's word, and one that answered a
    // number and kept nothing made "take the service's" lose the edit. (The client has checked the content it
    // gives is what its hash names.)
    const back = await keeper.client.flowDef.versionContent({ version });
    const wrong = keptCopyNotFound({ flowPath, path, hash }, back);
    if (wrong !== null)
      throw new NotWritten(relative, `your version could not be kept first (${wrong}): not replaced`);
    return { version };
  }
  const beside = conflictCopyName(relative, now);
  const outside = writeContained(keeper.root, beside, read.bytes);
  if (outside !== null)
    throw new NotWritten(relative, `a copy of yours could not be kept: ${notContainedReason(outside)}`);
  return { beside };
}

/**
 * Why these bytes of a file are not sent as a copy of it, as the scan says it (FILE_WARNINGS), or null: what the
 * scan never sends (a hard link, over the size a file may be, not UTF-8 text) is never sent by "take the service's"
 * or a restore either (a hard link to a canary key was sent as a conflict copy, and read back by anyone with the
 * token).
 */
export function notSendable(bytes: Buffer, links: number): 'hardlink' | 'oversized' | 'binary' | null {
  if (links > 1) return 'hardlink';
  if (bytes.length > MAX_FILE_BYTES) return 'oversized';
  // The hasher's rule: a NUL byte, or bytes that are not UTF-8, make a file binary.
  if (bytes.includes(0) || !isUtf8(bytes)) return 'binary';
  return null;
}

/** Why the version a service said it kept is not the copy it was given, or null when it is. */
export function keptCopyNotFound(
  sent: { flowPath: string; path: string; hash: string },
  back: { version: number; flow_path: string; path: string; hash: string | null },
): string | null {
  const as = `version ${back.version}`;
  if (back.flow_path !== sent.flowPath || back.path !== sent.path)
    return `the service said it kept it as ${as}, which is ${printable(`${back.flow_path}/${back.path}`.slice(0, 300))}`;
  if (back.hash !== sent.hash)
    return `the service said it kept it as ${as}, which holds other bytes (${back.hash === null ? 'a deletion' : `${back.hash.slice(0, 12)}…`})`;
  return null;
}

/** Where a copy was kept, in words: "kept as version 57 in the service's history", "kept as flows/a/x.conflict-….yml". */
export function keptWhere(kept: KeptCopy): string {
  return kept.version !== undefined
    ? `kept as version ${kept.version} in the service's history`
    : `kept beside it as ${kept.beside}`;
}
