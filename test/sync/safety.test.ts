import { describe, expect, it } from 'vitest';
import {
  DEFAULT_DELETION_GUARD,
  DELETION_STILL_MAX_MS,
  DELETION_STILL_MS,
  deletionVerdict,
  takeAsks,
  type DeletionFacts,
  type DeletionVerdict,
} from '../../src/sync/safety.ts';

/**
 * When deletions go (issue 39): each row is a situation the engine meets, described, with the verdict. Mutagen's
 * reconcile_test.go is the model: the rule is read off the table, and a new case is one row.
 */
const NOW = 1_000_000;
const base: DeletionFacts = {
  waiting: 0,
  acknowledged: 500,
  confirmed: 0,
  held: 0,
  guard: DEFAULT_DELETION_GUARD,
  watching: true,
  seen: null,
  now: NOW,
};

const rows: { description: string; facts: Partial<DeletionFacts>; expected: DeletionVerdict }[] = [
  {
    description: 'nothing deleted: nothing to hold or wait for',
    facts: {},
    expected: { verdict: 'send', seen: null },
  },
  {
    description: 'a few deletions without watching (flowsync sync, a first round): they go',
    facts: { waiting: 3, watching: false },
    expected: { verdict: 'send', seen: null },
  },
  {
    description: 'a few deletions while watching, first seen now: they settle for the settle time',
    facts: { waiting: 3 },
    expected: { verdict: 'wait', waitMs: DELETION_STILL_MS, seen: { count: 3, since: NOW, first: NOW } },
  },
  {
    description: 'the same count for the settle time: they go',
    facts: {
      waiting: 3,
      seen: { count: 3, since: NOW - DELETION_STILL_MS, first: NOW - DELETION_STILL_MS },
    },
    expected: {
      verdict: 'send',
      seen: { count: 3, since: NOW - DELETION_STILL_MS, first: NOW - DELETION_STILL_MS },
    },
  },
  {
    description: 'an rm -r seen in two parts (3, then 37): the count moved, the wait starts again',
    facts: { waiting: 40, seen: { count: 3, since: NOW - 1500, first: NOW - 1500 } },
    expected: {
      verdict: 'wait',
      waitMs: DELETION_STILL_MS,
      seen: { count: 40, since: NOW, first: NOW - 1500 },
    },
  },
  {
    description: 'a count that never stands still waits no longer than the most from the first seen',
    facts: { waiting: 41, seen: { count: 40, since: NOW - 100, first: NOW - DELETION_STILL_MAX_MS + 500 } },
    expected: {
      verdict: 'wait',
      waitMs: 500,
      seen: { count: 41, since: NOW, first: NOW - DELETION_STILL_MAX_MS + 500 },
    },
  },
  {
    description: 'more than 100 files: held for their user, whatever the share',
    facts: { waiting: 101, acknowledged: 100_000 },
    expected: { verdict: 'hold', held: 101, seen: null },
  },
  {
    description: 'exactly 100 files of a large repository: not over the guard, they settle and go',
    facts: { waiting: 100, acknowledged: 100_000 },
    expected: { verdict: 'wait', waitMs: DELETION_STILL_MS, seen: { count: 100, since: NOW, first: NOW } },
  },
  {
    description: 'over a quarter of the repository, from 10 deletions on: held',
    facts: { waiting: 40, acknowledged: 42 },
    expected: { verdict: 'hold', held: 40, seen: null },
  },
  {
    description: '9 deletions of a repository of 10: an edit, not held',
    facts: { waiting: 9, acknowledged: 10, watching: false },
    expected: { verdict: 'send', seen: null },
  },
  {
    description: 'held ones its user confirmed (sync --yes): they go at once, no settle',
    facts: { waiting: 150, confirmed: 150, held: 0 },
    expected: { verdict: 'send', seen: null },
  },
  {
    description:
      'confirmed ones still waiting after a round the service refused for a conflict: the word stands, they go again',
    facts: { waiting: 149, confirmed: 149 },
    expected: { verdict: 'send', seen: null },
  },
  {
    description:
      'one more deleted after its user confirmed 150: the 150 go, the new one is judged alone and settles',
    facts: { waiting: 151, confirmed: 150 },
    expected: { verdict: 'wait', waitMs: DELETION_STILL_MS, seen: { count: 1, since: NOW, first: NOW } },
  },
  {
    description:
      'a new rm -r over the guard while confirmed ones still wait: the new ones are held, a new question',
    facts: { waiting: 270, confirmed: 150 },
    expected: { verdict: 'hold', held: 120, seen: null },
  },
  {
    description:
      'a held rm -r of 106 with 10 put back (506 synced): the 96 left stay held, though alone they are under the guard',
    facts: { waiting: 96, held: 96, acknowledged: 506 },
    expected: { verdict: 'hold', held: 96, seen: null },
  },
  {
    description:
      'one file deleted while a set of 96 is held: it joins the set, held too (alone it would have gone)',
    facts: { waiting: 97, held: 96, acknowledged: 506 },
    expected: { verdict: 'hold', held: 97, seen: null },
  },
  {
    description: 'a held set after a restart (the first round, not watching yet): still held',
    facts: { waiting: 96, held: 96, acknowledged: 506, watching: false },
    expected: { verdict: 'hold', held: 96, seen: null },
  },
  {
    description:
      'every file of the held set back on disk, one other deletion made meanwhile: no set held, it is judged alone',
    facts: { waiting: 1, held: 0, acknowledged: 506 },
    expected: { verdict: 'wait', waitMs: DELETION_STILL_MS, seen: { count: 1, since: NOW, first: NOW } },
  },
  {
    description:
      'a held set next to confirmed ones (confirmed, then more held): the held ones wait, the confirmed go',
    facts: { waiting: 200, confirmed: 150, held: 50 },
    expected: { verdict: 'hold', held: 50, seen: null },
  },
  {
    description: 'a repository whose guard is off: never held, still settles while watching',
    facts: { waiting: 5000, acknowledged: 5000, guard: null },
    expected: {
      verdict: 'wait',
      waitMs: DELETION_STILL_MS,
      seen: { count: 5000, since: NOW, first: NOW },
    },
  },
  {
    description: 'held keeps what was seen, for when its user settles them',
    facts: { waiting: 200, seen: { count: 200, since: NOW - 10, first: NOW - 10 } },
    expected: { verdict: 'hold', held: 200, seen: { count: 200, since: NOW - 10, first: NOW - 10 } },
  },
];

describe('deletionVerdict', () => {
  for (const row of rows)
    it(row.description, () => {
      expect(deletionVerdict({ ...base, ...row.facts })).toEqual(row.expected);
    });
});

/**
 * Taking the team's changes (issue 46): whether it asks first, with the allowance of this checkout's own deletions.
 * `takesAway`: the files the take deletes or overwrites here.
 */
const takeRows: { description: string; facts: Parameters<typeof takeAsks>[0]; asks: boolean }[] = [
  {
    description: "a teammate's edit of one file of 14: taken without asking",
    facts: { takesAway: 1, acknowledged: 14, guard: DEFAULT_DELETION_GUARD, confirmed: false },
    asks: false,
  },
  {
    description: 'a teammate deleted 12 files of 14 (a folder on a branch): asks first',
    facts: { takesAway: 13, acknowledged: 14, guard: DEFAULT_DELETION_GUARD, confirmed: false },
    asks: true,
  },
  {
    description: 'the same, its user said yes to the list: taken',
    facts: { takesAway: 13, acknowledged: 14, guard: DEFAULT_DELETION_GUARD, confirmed: true },
    asks: false,
  },
  {
    description: '217 of 351 (the branch cleanup): asks first',
    facts: { takesAway: 217, acknowledged: 351, guard: DEFAULT_DELETION_GUARD, confirmed: false },
    asks: true,
  },
  {
    description: '40 of 1,000 (a refactor): under both the count and the share, taken without asking',
    facts: { takesAway: 40, acknowledged: 1000, guard: DEFAULT_DELETION_GUARD, confirmed: false },
    asks: false,
  },
  {
    description: '101 of 100,000: over the count, asks whatever the share',
    facts: { takesAway: 101, acknowledged: 100_000, guard: DEFAULT_DELETION_GUARD, confirmed: false },
    asks: true,
  },
  {
    description: 'only files new here (nothing deleted or overwritten): never asks',
    facts: { takesAway: 0, acknowledged: 14, guard: DEFAULT_DELETION_GUARD, confirmed: false },
    asks: false,
  },
  {
    description: 'a repository whose guard is off: never asks, as it never holds',
    facts: { takesAway: 5000, acknowledged: 5000, guard: null, confirmed: false },
    asks: false,
  },
];

describe('takeAsks', () => {
  for (const row of takeRows)
    it(row.description, () => {
      expect(takeAsks(row.facts)).toBe(row.asks);
    });
});
