/*
 * When deletions go to the service, decided in one pure function (issue 39; Mutagen's pkg/synchronization/safety.go
 * is the model): the held-deletion guard, its defaults and the settle rule. The engine keeps `seen` between rounds
 * and gives the clock; nothing here reads the disk, the state or the time.
 */

/**
 * A round that would delete more than `files` files, or more than `share` of the repository's synced files (from
 * MIN_HELD_DELETIONS on), sends its deletions only once its user says so: a branch switch or a stray `rm -r`
 * must not empty the service for the whole team.
 */
export interface DeletionGuard {
  files: number;
  share: number;
}

/**
 * 100 files or a quarter of the repository. A branch switch measured this round deleted 159 files of 499 (32 %),
 * a checkout of an old commit 331: both held. A refactor that deletes a few dozen files of a large repository, or a
 * flow of 20 files removed from 300, goes through: holding every deletion would teach users to say yes blindly.
 */
export const DEFAULT_DELETION_GUARD: DeletionGuard = { files: 100, share: 0.25 };

/** Below this many deletions the share does not hold anything: deleting 3 files of a repository of 5 is an edit. */
export const MIN_HELD_DELETIONS = 10;

/**
 * While watching, deletions go once their count stood still this long: an `rm -r` of 40 files was seen in two
 * parts under load (3, then 37), the round between sent the 3 and only the 37 were held. Syncthing delays deletions
 * for the same reason (its watcher holds removals longer than other changes). Edits are not delayed.
 */
export const DELETION_SETTLE_MS = 2000;
/** However often the count changes, deletions wait at most this long from the first one seen. */
export const DELETION_SETTLE_MAX_MS = 10_000;

/** The deletions waiting at the last plan, since when that count stood, and since when any were seen. */
export interface DeletionsSeen {
  count: number;
  since: number;
  first: number;
}

export interface DeletionFacts {
  /** Deletions waiting now (files acknowledged by the service and gone from disk). */
  waiting: number;
  /** Files the service acknowledged for this checkout: the share is of these. */
  acknowledged: number;
  /** How many its user allowed to go (`sync --yes`, "Delete them on the service"); 0: none. */
  allowed: number;
  /** The repository's guard; null: deletions are never held. */
  guard: DeletionGuard | null;
  /** Whether the engine watches (a rescan, `flowsync sync` and the first round see the disk whole). */
  watching: boolean;
  /** What the last plan saw (null: nothing waited, or it was not watching). */
  seen: DeletionsSeen | null;
  now: number;
}

/**
 * `send`: the deletions go in this round. `hold`: more than the guard lets through and more than its user allowed:
 * they wait for their user. `settle`: the count is still moving while watching: the round looks again in `waitMs`.
 * `seen` is what the engine keeps for the next plan.
 */
export type DeletionVerdict =
  | { verdict: 'send'; seen: DeletionsSeen | null }
  | { verdict: 'hold'; held: number; seen: DeletionsSeen | null }
  | { verdict: 'settle'; waitMs: number; seen: DeletionsSeen };

export function deletionVerdict(facts: DeletionFacts): DeletionVerdict {
  const { waiting, acknowledged, allowed, guard, watching, seen, now } = facts;
  const over =
    guard !== null &&
    (waiting > guard.files || (waiting >= MIN_HELD_DELETIONS && waiting > guard.share * acknowledged));
  if (over && waiting > allowed) return { verdict: 'hold', held: waiting, seen };
  if (waiting === 0 || !watching || allowed > 0) return { verdict: 'send', seen: null };
  const first = seen?.first ?? now;
  const standing = seen?.count === waiting ? seen : { count: waiting, since: now, first };
  // A count that never stands still (a generator rewriting its folder) does not hold deletions back for ever.
  const until = Math.min(standing.since + DELETION_SETTLE_MS, first + DELETION_SETTLE_MAX_MS);
  const waitMs = Math.max(0, until - now);
  return waitMs > 0 ? { verdict: 'settle', waitMs, seen: standing } : { verdict: 'send', seen: standing };
}
