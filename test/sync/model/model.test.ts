import { describe, expect, it } from 'vitest';
import { realCore, type Core } from './core.ts';
import type { Step } from './history.ts';
import { checkModel, runHistory } from './run.ts';
import type { TeamShape } from './team.ts';
import {
  behindAsInSync,
  copyReadAsNewest,
  deletionNotHeld,
  gitMotionsAsEdits,
  heldSetForgotten,
  inSyncWithNoAgent,
  ownByLabelAlone,
} from './variants.ts';

/*
 * The model of the team (issue 45): random histories of 2-4 checkouts and one service, the pure core checked after
 * every step. `npm run model -- --runs N` runs it longer.
 */

const rulesOf = (broken: readonly string[]) => [...new Set(broken.map((line) => line.split(': ')[1]))];

describe('the model of the team', () => {
  it('finds no violation in 1,500 histories of src’s core, no label shared', () => {
    const result = checkModel({ runs: 1500, seed: 45, core: realCore, sharedLabels: false });
    expect(result.failure?.broken ?? []).toEqual([]);
  });

  it('finds no violation in 1,500 histories of src’s core, two checkouts of a team may share one writer id', () => {
    const result = checkModel({ runs: 1500, seed: 46, core: realCore });
    expect(result.failure?.broken ?? []).toEqual([]);
  });
});

/** Each known-bad core, the seed whose run catches it, and the rule it breaks. */
const KNOWN_BAD: { what: string; core: Core; seed: number; rule: string }[] = [
  {
    what: 'behind read as in sync',
    core: behindAsInSync,
    seed: 1,
    rule: '"in sync" said while the disk differs',
  },
  {
    what: 'a deletion not held',
    core: deletionNotHeld,
    seed: 1,
    rule: 'a deletion over the guard reaches the service unconfirmed',
  },
  {
    what: 'an own-version check that trusts the writer label alone (two checkouts share one)',
    core: ownByLabelAlone,
    seed: 1,
    rule: "a teammate's version is overwritten unseen",
  },
  {
    what: 'went back in time read from a conflict copy as the newest version',
    core: copyReadAsNewest,
    seed: 13,
    rule: 'went back in time said when it did not',
  },
  {
    what: 'a held set forgotten: the guard counts each round (failure 3)',
    core: heldSetForgotten,
    seed: 3,
    rule: 'a held deletion reaches the service unconfirmed',
  },
  {
    what: '"in sync" read from the state with no agent running (failure 5)',
    core: inSyncWithNoAgent,
    seed: 5,
    rule: '"in sync" said while the disk differs',
  },
];

describe.each(KNOWN_BAD)('a known-bad core: $what', ({ core, seed, rule }) => {
  it('is caught, with a shrunk history', () => {
    // Labels are shared only where the variant is about them: so the rule caught first is the variant's.
    const result = checkModel({ runs: 2000, seed, core, sharedLabels: core === ownByLabelAlone });
    expect(result.violations).toBe(1);
    expect(rulesOf(result.failure!.broken)).toContain(rule);
    expect(result.failure!.steps.length).toBeLessThanOrEqual(6);
  });
});

/** Issue 45's failures as the model found them in src's core (shrunk histories), and the rule each breaks. */
const FAILURES: {
  failure: string;
  shape: TeamShape;
  steps: Step[];
  rule: string;
  fixed: boolean;
}[] = [
  {
    failure: '1: a conflict copy makes another checkout say the service went back in time',
    shape: { checkouts: 3, sharedLabel: false },
    steps: [
      { do: 'edit', who: 1, path: 'f1/a' },
      { do: 'round', who: 1, answerLost: false },
      { do: 'edit', who: 0, path: 'f1/a' },
      { do: 'round', who: 0, answerLost: false },
      { do: 'resolve theirs', who: 0 },
    ],
    rule: 'went back in time said when it did not',
    fixed: true,
  },
  {
    failure: '3: a held mass deletion released by a partial undo',
    shape: { checkouts: 2, sharedLabel: false },
    steps: [
      { do: 'rm -r', who: 0, flow: 'f1' },
      { do: 'round', who: 0, answerLost: false },
      { do: 'git checkout --', who: 0, paths: ['f1/a', 'f1/b'] },
    ],
    rule: 'a held deletion reaches the service unconfirmed',
    fixed: true,
  },
  {
    failure: '3: a held mass deletion released when a teammate deletes one of its files',
    shape: { checkouts: 2, sharedLabel: false },
    steps: [
      { do: 'delete', who: 1, paths: ['f1/b', 'f1/c', 'f1/a', 'f2/a'] },
      { do: 'delete', who: 0, paths: ['f1/b'] },
    ],
    rule: 'a held deletion reaches the service unconfirmed',
    fixed: true,
  },
  {
    failure:
      '4: sync --yes sends nothing when the service refuses the flow, and the deletions are held again',
    shape: { checkouts: 3, sharedLabel: false },
    steps: [
      { do: 'edit', who: 0, path: 'f1/a' },
      { do: 'rm -r', who: 2, flow: 'f1' },
      { do: 'sync --yes', who: 0 },
      { do: 'sync --yes', who: 2 },
    ],
    rule: 'a confirmed deletion is held again',
    fixed: true,
  },
  {
    failure:
      'found by the model in 2fb9d54: with its flow in flight, a checkout takes a version written under its label ' +
      'by a copy of it for its own, and deletes it',
    shape: { checkouts: 2, sharedLabel: true },
    steps: [
      { do: 'delete', who: 0, paths: ['f1/a', 'f1/b'] },
      { do: 'delete', who: 1, paths: ['f1/a'] },
      { do: 'round', who: 1, answerLost: true },
      { do: 'round', who: 0, answerLost: false },
      { do: 'edit', who: 0, path: 'f1/a' },
    ],
    rule: "a teammate's version is overwritten unseen",
    fixed: true,
  },
  {
    failure:
      'found by the model: a rebuilt state takes an edit written under its id by a copy of it for its own, and reverts it',
    shape: { checkouts: 2, sharedLabel: true },
    steps: [
      { do: 'edit', who: 0, path: 'f1/a' },
      { do: 'sync --yes', who: 0 },
      { do: 'lose state', who: 1 },
    ],
    rule: "a teammate's version is overwritten unseen",
    fixed: true,
  },
  {
    failure:
      'found by the model: after the service went back in time, an edit under its id by a copy of it is taken for ' +
      'the older version it went back to, and written over',
    shape: { checkouts: 3, sharedLabel: true },
    steps: [
      { do: 'edit', who: 0, path: 'f1/b' },
      { do: 'round', who: 0, answerLost: false },
      { do: 'restore service backup', back: 1 },
      { do: 'edit', who: 1, path: 'f1/b' },
    ],
    rule: "a teammate's version is overwritten unseen",
    fixed: true,
  },
  {
    failure:
      "found by the model: an edit made while the state was lost, then deleted, leaves the service's file unnamed " +
      'while "in sync" is said',
    shape: { checkouts: 3, sharedLabel: false },
    steps: [
      { do: 'edit', who: 0, path: 'f1/b' },
      { do: 'lose state', who: 0 },
      { do: 'delete', who: 0, paths: ['f1/b'] },
    ],
    rule: '"in sync" said while the disk differs',
    fixed: true,
  },
  {
    failure:
      'found by the model: "take theirs" on a file the service lost replaces the only copy of it without keeping one',
    shape: { checkouts: 3, sharedLabel: false },
    steps: [
      { do: 'edit', who: 0, path: 'f1/b' },
      { do: 'round', who: 0, answerLost: false },
      { do: 'restore service backup', back: 1 },
      { do: 'look', who: 0 },
      { do: 'resolve theirs', who: 0 },
    ],
    rule: 'an edit is replaced without a copy',
    fixed: true,
  },
  {
    failure: '5: status with no agent running says in sync over an unsent edit',
    shape: { checkouts: 2, sharedLabel: false },
    steps: [
      { do: 'stop agent', who: 0 },
      { do: 'edit', who: 0, path: 'f1/a' },
    ],
    rule: '"in sync" said while the disk differs',
    fixed: true,
  },
];

describe.each(FAILURES)('issue 45 failure $failure', ({ shape, steps, rule, fixed }) => {
  // Each row was found by the model in src's core before its fix landed (its shrunk history, kept here).
  it(fixed ? 'breaks nothing in src’s core (fixed)' : `breaks "${rule}" in src's core today`, () => {
    const broken = runHistory(realCore, shape, steps);
    if (fixed) expect(broken).toEqual([]);
    else expect(rulesOf(broken)).toContain(rule);
  });
});

/**
 * Issue 46's finding as a history of the model: Bob takes Ada's version, then `git checkout -- .` puts his branch's
 * committed one back. src's core holds it as git's change set; read as an edit (the core before), it reverts Ada's.
 */
const REVERT_OF_A_TEAMMATE: Step[] = [
  { do: 'edit', who: 0, path: 'f1/a' },
  { do: 'round', who: 0, answerLost: false },
  { do: 'look', who: 1 },
  { do: 'take newer', who: 1 },
  { do: 'git checkout --', who: 1, paths: ['f1/a'] },
  { do: 'round', who: 1, answerLost: false },
];

describe("git's motions in the model (issue 46)", () => {
  const shape = { checkouts: 2, sharedLabel: false };
  it("`git checkout --` after taking a teammate's version is held: nothing reaches the service unconfirmed", () => {
    expect(runHistory(realCore, shape, REVERT_OF_A_TEAMMATE)).toEqual([]);
  });

  it('read as an edit (a known-bad core), the revert reaches the service: caught', () => {
    expect(rulesOf(runHistory(gitMotionsAsEdits, shape, REVERT_OF_A_TEAMMATE))).toContain(
      "a revert of a teammate's version to the branch's committed one reaches the service unconfirmed",
    );
  });

  it('sync --yes sends the held revert on its user’s word, and the team quiesces', () => {
    expect(runHistory(realCore, shape, [...REVERT_OF_A_TEAMMATE, { do: 'sync --yes', who: 1 }])).toEqual([]);
  });
});
