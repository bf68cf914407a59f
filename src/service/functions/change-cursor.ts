/**
 * The cursor of the change feed, as callers hold it: the newest history version an answer covered and when it was
 * given (`<version>.<ms since 1970>`). Opaque to callers; the service reads it back with `readCursor`.
 */
export function changeCursor(version: number, now: number): string {
  return `${version}.${now}`;
}

/**
 * What the service can answer from a caller's cursor: the version to go on from, or why it cannot (a gap: the
 * caller looks at every flow once). A first call has none; a cursor not of this form was not given by this
 * service; one past the history's newest version is of another database, or of this one before it was restored
 * from an older copy; one older than the retention may miss a deletion whose tombstone was pruned since.
 */
export function readCursor(
  after: string | null,
  history: { newest: number; retentionDays: number },
  now: number,
):
  | { version: number }
  | { gap: 'first call' | 'not a cursor' | 'another history' | 'older than the history' } {
  if (after === null) return { gap: 'first call' };
  const match = /^(\d{1,15})\.(\d{1,15})$/.exec(after);
  if (!match) return { gap: 'not a cursor' };
  const version = Number(match[1]);
  const given = Number(match[2]);
  if (version > history.newest || given > now + DAY_MS) return { gap: 'another history' };
  // A day short of the retention: pruning runs hourly, and a clock may be off by a few hours.
  if (now - given > (history.retentionDays - 1) * DAY_MS) return { gap: 'older than the history' };
  return { version };
}

const DAY_MS = 86_400_000;
