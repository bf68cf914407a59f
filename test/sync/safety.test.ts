import { describe, expect, it } from 'vitest';
import {
  DEFAULT_DELETION_GUARD,
  DELETION_SETTLE_MAX_MS,
  DELETION_SETTLE_MS,
  deletionVerdict,
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
  allowed: 0,
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
    expected: { verdict: 'settle', waitMs: DELETION_SETTLE_MS, seen: { count: 3, since: NOW, first: NOW } },
  },
  {
    description: 'the same count for the settle time: they go',
    facts: {
      waiting: 3,
      seen: { count: 3, since: NOW - DELETION_SETTLE_MS, first: NOW - DELETION_SETTLE_MS },
    },
    expected: {
      verdict: 'send',
      seen: { count: 3, since: NOW - DELETION_SETTLE_MS, first: NOW - DELETION_SETTLE_MS },
    },
  },
  {
    description: 'an rm -r seen in two parts (3, then 37): the count moved, the wait starts again',
    facts: { waiting: 40, seen: { count: 3, since: NOW - 1500, first: NOW - 1500 } },
    expected: {
      verdict: 'settle',
      waitMs: DELETION_SETTLE_MS,
      seen: { count: 40, since: NOW, first: NOW - 1500 },
    },
  },
  {
    description: 'a count that never stands still waits no longer than the most from the first seen',
    facts: { waiting: 41, seen: { count: 40, since: NOW - 100, first: NOW - DELETION_SETTLE_MAX_MS + 500 } },
    expected: {
      verdict: 'settle',
      waitMs: 500,
      seen: { count: 41, since: NOW, first: NOW - DELETION_SETTLE_MAX_MS + 500 },
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
    expected: { verdict: 'settle', waitMs: DELETION_SETTLE_MS, seen: { count: 100, since: NOW, first: NOW } },
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
    description: 'held ones its user allowed (sync --yes): they go at once, no settle',
    facts: { waiting: 150, allowed: 150 },
    expected: { verdict: 'send', seen: null },
  },
  {
    description: 'more than its user allowed (the count grew since): held again, a new question',
    facts: { waiting: 151, allowed: 150 },
    expected: { verdict: 'hold', held: 151, seen: null },
  },
  {
    description: 'a repository whose guard is off: never held, still settles while watching',
    facts: { waiting: 5000, acknowledged: 5000, guard: null },
    expected: {
      verdict: 'settle',
      waitMs: DELETION_SETTLE_MS,
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
