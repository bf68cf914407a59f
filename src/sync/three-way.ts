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
 * (issue 36: a file grown over 1 MiB was sent as a deletion, and the teammates' copy was deleted). A file not sent
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
