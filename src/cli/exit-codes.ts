/**
 * Exit codes every command keeps: 0 success, 1 remote error, 2 usage, 3 transport, 4 waiting for you (a file in
 * conflict with the service's version, or deletions held): nothing is lost, and nothing is "in sync" either.
 * 5 is `status`'s own: files are newer on the service (a teammate's edits, `flowsync resolve --newer` takes them)
 * and nothing else waits for you.
 */
export const EXIT = { ok: 0, remote: 1, usage: 2, transport: 3, attention: 4, behind: 5 } as const;

/** What `status` exits on, of each repository of the current service. */
export interface StatusExitFacts {
  /** Something waits for its user (needsOf is not empty). */
  waiting: boolean;
  /** The look at the service asked now got no answer (or none could be made: the service not reached). */
  notReached: boolean;
  /** The running agent finds the service offline or unavailable. */
  away: boolean;
  /** Files newer on the service, untouched here. */
  behind: number;
}

/**
 * `status`'s exit code, so that `flowsync status && …` never reads "all good" over a teammate's edit newer on the
 * service: what waits for you first (known, and yours to act on), then a service not reached (what is newer
 * there is not known now), then files newer there; 0 only when none of them is so.
 */
export function statusExit(repos: readonly StatusExitFacts[]): number {
  if (repos.some((repo) => repo.waiting)) return EXIT.attention;
  if (repos.some((repo) => repo.notReached || repo.away)) return EXIT.transport;
  if (repos.some((repo) => repo.behind > 0)) return EXIT.behind;
  return EXIT.ok;
}
