/**
 * What one file of the outbox asks of the service, from its two sides this checkout knows: the disk (`localHash`
 * null: gone from it; `warning` set: on it, but not sent) and the base (`ackedHash`: what the service last
 * acknowledged, null: nothing). Pure, and written once, with its SQL twin (three-way.test.ts runs both on the same
 * rows): the planner, the held-deletion guard, "restore them on disk" and the pending count all ask it, so they
 * cannot disagree on what a deletion is.
 */
export interface OutboxSides {
  localHash: string | null;
  warning: string | null;
  ackedHash: string | null;
}

/**
 * What should be on the service: the disk's hash when it is sendable; nothing when the file is gone from disk; and
 * when it is on disk but not sent (over 1 MiB, binary, a link, a FIFO, unreadable now…), whatever the service has
 * (a file grown over 1 MiB was sent as a deletion, and the teammates' copy was deleted). A file not sent
 * is a line that says why, never a reason to take the service's version away.
 */
export function wantedOnService(file: OutboxSides): string | null {
  if (file.localHash === null) return null;
  return file.warning === null ? file.localHash : file.ackedHash;
}

/** Only a file gone from disk that the service has is a deletion. */
export function isDeletion(file: OutboxSides): boolean {
  return file.localHash === null && file.ackedHash !== null;
}

/** On disk, not sendable, on the service: what the service has of it stands, and a full listing would drop it. */
export function isKeptAsOnService(file: OutboxSides): boolean {
  return file.localHash !== null && file.warning !== null && file.ackedHash !== null;
}

/** `wantedOnService` in SQL, over the files table's columns (`alias`: the table's name in the query). */
export function wantedOnServiceSql(alias = 'files'): string {
  return `(CASE WHEN ${alias}.local_hash IS NULL THEN NULL WHEN ${alias}.warning IS NULL THEN ${alias}.local_hash
    ELSE ${alias}.acked_hash END)`;
}

/** `isDeletion` in SQL; the index files_deletions (state.ts) is made on these same terms. */
export const IS_DELETION_SQL = 'acked_hash IS NOT NULL AND local_hash IS NULL';

/**
 * Where one file stands between its three sides: `disk` is the hash of what is on disk (null: nothing;
 * '' for a file not read: over 1 MiB, a link…), `base` what this checkout last synced (acknowledged), `service` what the service holds now
 * (null: nothing). Decided here once; the state asks it in SQL (fileSideSql) for its counts and lists.
 * - 'in sync': the disk is what the service has, whatever the base (a git pull that made the disk the service's
 *   ends a conflict: it is no longer one).
 * - 'yours to send': changed here only; the next round sends it.
 * - 'behind': changed on the service only (a teammate's edit of a file untouched here): nothing here is at stake,
 *   and taking the service's copy loses nothing. Never a conflict.
 * - 'conflict': changed on both sides, differently.
 */
export type FileSide = 'in sync' | 'yours to send' | 'behind' | 'conflict';

export function fileSide(sides: {
  disk: string | null;
  base: string | null;
  service: string | null;
  /** The service no longer has the base version (it went back in time): what it holds is not newer. */
  lost?: boolean;
  /**
   * Raised by what happened here, whatever the hashes say: a version restored while the service holds a
   * newer one, or a file deleted on the service before this checkout's first round that its disk would re-create.
   * A conflict until the disk is the service's or its user settles it, never "behind" nor sent silently.
   */
  raised?: boolean;
}): FileSide {
  const { disk, base, service } = sides;
  if (disk === service) return 'in sync';
  if (sides.raised === true) return 'conflict';
  if (service === base) return 'yours to send';
  if (sides.lost === true) return 'conflict';
  if (disk === base) return 'behind';
  return 'conflict';
}

/**
 * Whether the service went back in time (restored from an older backup, another database put at its address, its
 * files lost): a file it holds in another version than this checkout's base, whose history lacks that base, or
 * whose newest version is not what it holds. A teammate's edit or deletion is the newest version, and replaces the
 * base, which stays in the history (30 days, and the last versions of every file at the size cap); a service that
 * never had the base, or lost the file, shows no such thing. `versions`: the file's history, newest first (hashes,
 * null for a deletion) as the service lists it. A conflict copy (`copy`: a checkout's bytes kept beside the
 * service's, never the current version) is no version of the file's line: it was the newest, and every other
 * checkout announced the service had gone back in time and marked its teammates' changes lost (the team model's
 * first catch). `service`: what the service holds now (null: nothing).
 */
export function wentBackInTime(
  samples: readonly {
    base: string | null;
    service: string | null;
    versions: readonly { hash: string | null; copy?: boolean }[];
  }[],
): boolean {
  return samples.some((sample) => {
    const line = sample.versions.filter((version) => version.copy !== true).map((version) => version.hash);
    return (sample.base !== null && !line.includes(sample.base)) || (line[0] ?? null) !== sample.service;
  });
}

/**
 * `fileSide` in SQL, over a conflicts row `c` (the service's side, as last seen) joined to its files row `f` (the
 * disk and the base; null when the state has no row of it: nothing on disk, nothing synced).
 */
export const FILE_SIDE_SQL = `(CASE
  WHEN f.local_hash IS c.service_hash THEN 'in sync'
  WHEN c.raised = 1 THEN 'conflict'
  WHEN c.service_hash IS f.acked_hash THEN 'yours to send'
  WHEN c.lost = 1 THEN 'conflict'
  WHEN f.local_hash IS f.acked_hash THEN 'behind'
  ELSE 'conflict' END)`;
