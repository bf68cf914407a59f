/*
 * When deletions go to the service, decided in one pure function (Mutagen's pkg/synchronization/safety.go is the
 * model): the held-deletion guard, its defaults and the rule that waits for their count to stand still. The engine
 * keeps `seen` between rounds and gives the clock; nothing here reads the disk, the state or the time.
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
export const DELETION_STILL_MS = 2000;
/** However often the count changes, deletions wait at most this long from the first one seen. */
export const DELETION_STILL_MAX_MS = 10_000;

/** The deletions waiting at the last plan, since when that count stood, and since when any were seen. */
export interface DeletionsSeen {
  count: number;
  since: number;
  first: number;
}

/** What the engine keeps of deletions between rounds (the held set and its user's word are in the state). */
export interface DeletionState {
  /** Deletions held at the last plan (0: none). */
  held: number;
  /** The count the last plan saw, and since when it stood still (see DELETION_STILL_MS). */
  seen: DeletionsSeen | null;
  /**
   * How long the deletions of the last plan still wait for their count to stand still (0: they went, or were held);
   * the round looks again then.
   */
  waitingMs: number;
}

export interface DeletionFacts {
  /** Deletions waiting now (files acknowledged by the service and gone from disk). */
  waiting: number;
  /** Files the service acknowledged for this checkout: the share is of these. */
  acknowledged: number;
  /**
   * Of them, how many its user confirmed (`sync --yes`, "Delete them on the service"): they go whatever the guard
   * says, in every round until the service took them (a round refused for a conflict does not undo the word).
   */
  confirmed: number;
  /**
   * Of them, how many belong to a held set its user has not confirmed. Once deletions are held they stay held as a
   * set (kept in the state: a restart does not release them) until confirmed or all back on disk: a partial undo
   * shrinks the set, it does not release the rest (10 of 106 put back must not send the other 96 for the team).
   */
  held: number;
  /** The repository's guard; null: deletions are never held. */
  guard: DeletionGuard | null;
  /** Whether the engine watches (a rescan, `flowsync sync` and the first round see the disk whole). */
  watching: boolean;
  /** What the last plan saw (null: nothing waited, or it was not watching). */
  seen: DeletionsSeen | null;
  now: number;
}

/**
 * The verdict is on the deletions its user has not confirmed (the confirmed ones go in any case). `send`: they go
 * in this round. `hold`: they wait for their user, every one of them joining the held set (`held`: how many).
 * `wait`: the count is still moving while watching: the round looks again in `waitMs`. `seen` is what the
 * engine keeps for the next plan.
 */
export type DeletionVerdict =
  | { verdict: 'send'; seen: DeletionsSeen | null }
  | { verdict: 'hold'; held: number; seen: DeletionsSeen | null }
  | { verdict: 'wait'; waitMs: number; seen: DeletionsSeen };

export function deletionVerdict(facts: DeletionFacts): DeletionVerdict {
  const { waiting, confirmed, held, acknowledged, guard, watching, seen, now } = facts;
  const unconfirmed = waiting - confirmed;
  // While a set is held, a deletion made since joins it: an `rm -r` undone in part and redone stays one question.
  if (held > 0) return { verdict: 'hold', held: unconfirmed, seen };
  const over =
    guard !== null &&
    (unconfirmed > guard.files ||
      (unconfirmed >= MIN_HELD_DELETIONS && unconfirmed > guard.share * acknowledged));
  if (over) return { verdict: 'hold', held: unconfirmed, seen };
  if (unconfirmed === 0 || !watching) return { verdict: 'send', seen: null };
  const first = seen?.first ?? now;
  const standing = seen?.count === unconfirmed ? seen : { count: unconfirmed, since: now, first };
  // A count that never stands still (a generator rewriting its folder) does not hold deletions back for ever.
  const until = Math.min(standing.since + DELETION_STILL_MS, first + DELETION_STILL_MAX_MS);
  const waitMs = Math.max(0, until - now);
  return waitMs > 0 ? { verdict: 'wait', waitMs, seen: standing } : { verdict: 'send', seen: standing };
}

/**
 * Whether taking the team's changes asks its user first (one click on "Take them" must not delete 217 files of a
 * checkout, with no word): the same allowance as this checkout's own deletions (deletionVerdict, not watching),
 * counting the files a take deletes or overwrites here (`takesAway`) against those the service acknowledged.
 * `confirmed`: its user said yes to this list. A guard of null never asks, as it never holds.
 */
export function takeAsks(facts: {
  takesAway: number;
  acknowledged: number;
  guard: DeletionGuard | null;
  confirmed: boolean;
}): boolean {
  const { takesAway, acknowledged, guard, confirmed } = facts;
  const verdict = deletionVerdict({
    waiting: takesAway,
    acknowledged,
    confirmed: confirmed ? takesAway : 0,
    held: 0,
    guard,
    watching: false,
    seen: null,
    now: 0,
  });
  return verdict.verdict === 'hold';
}
