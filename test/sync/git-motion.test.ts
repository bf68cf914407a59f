import { describe, expect, it } from 'vitest';
import {
  BUSY_RETRY_MS,
  GIT_WRITE_WINDOW_MS,
  REF_UPDATE_MS,
  gitMotionOf,
  holdsGitMotions,
  type GitTrail,
  type Motion,
  type MotionFacts,
} from '../../src/sync/git-motion.ts';

/**
 * Git's motion or a person's edit (issue 46): each row is what git left in its folder around a batch of changes,
 * described, with the verdict. The rule is read off the table; a new case is one row.
 */
const SEEN = 1_000_000_000;
const quiet: GitTrail = {
  head: { message: 'commit: seed', at: SEEN - 3_600_000 },
  stash: null,
  indexAt: SEEN - 3_600_000,
  busy: false,
  branch: 'main',
};
const reverted = [
  { path: 'flows/ci/build.yml', equalsHead: true },
  { path: 'flows/ci/test.yml', equalsHead: true },
];

const rows: {
  description: string;
  trail: Partial<GitTrail>;
  facts?: Partial<MotionFacts>;
  expected: Motion;
}[] = [
  {
    description: 'an edit with git quiet for an hour: the person’s',
    trail: {},
    facts: { files: [{ path: 'flows/ci/build.yml', equalsHead: false }] },
    expected: { kind: 'edit' },
  },
  {
    description: 'files back to HEAD’s version with git quiet for an hour (an editor’s undo): the person’s',
    trail: {},
    expected: { kind: 'edit' },
  },
  {
    description: '`git checkout -- .`: the index written as the files went back to HEAD, no reflog entry',
    trail: { indexAt: SEEN - 20 },
    expected: {
      kind: 'git',
      operation: 'checkout --',
      name: 'git checkout -- on main',
      files: ['flows/ci/build.yml', 'flows/ci/test.yml'],
      edits: [],
    },
  },
  {
    description:
      'the index written 50 ms ago and no reflog entry yet: a switch may be writing HEAD, look again',
    trail: { indexAt: SEEN - 20 },
    facts: { now: SEEN + 30 },
    expected: { kind: 'wait', ms: REF_UPDATE_MS },
  },
  {
    description: 'git holds its index lock: its files are not all written, look again',
    trail: { busy: true },
    expected: { kind: 'wait', ms: BUSY_RETRY_MS },
  },
  {
    description:
      'a branch switch: the files are the new branch’s, named by it; a carried edit is the person’s',
    trail: {
      head: { message: 'checkout: moving from main to cleanup', at: SEEN - 400 },
      indexAt: SEEN - 300,
      branch: 'cleanup',
    },
    facts: {
      files: [
        { path: 'flows/old/a.yml', equalsHead: true },
        { path: 'flows/ci/build.yml', equalsHead: false },
      ],
    },
    expected: {
      kind: 'git',
      operation: 'branch switch',
      name: 'branch cleanup',
      files: ['flows/old/a.yml'],
      edits: ['flows/ci/build.yml'],
    },
  },
  {
    description: 'a switch whose batch was looked at 4 s later (a round under way): still git’s',
    trail: {
      head: { message: 'checkout: moving from main to cleanup', at: SEEN - 400 },
      indexAt: SEEN - 300,
      branch: 'cleanup',
    },
    facts: { now: SEEN + 4000 },
    expected: {
      kind: 'git',
      operation: 'branch switch',
      name: 'branch cleanup',
      files: ['flows/ci/build.yml', 'flows/ci/test.yml'],
      edits: [],
    },
  },
  {
    description:
      'a switch seen longer ago than the window: the person’s (a rescan long after says so itself)',
    trail: {
      head: { message: 'checkout: moving from main to cleanup', at: SEEN - GIT_WRITE_WINDOW_MS - 1000 },
      indexAt: SEEN - GIT_WRITE_WINDOW_MS - 900,
    },
    expected: { kind: 'edit' },
  },
  {
    description: 'edits just committed (the reflog says commit): a commit moves no file, the person’s',
    trail: { head: { message: 'commit: fix build', at: SEEN - 300 }, indexAt: SEEN - 300 },
    expected: { kind: 'edit' },
  },
  {
    description: '`git reset --hard`: named reset',
    trail: { head: { message: 'reset: moving to HEAD~1', at: SEEN - 100 }, indexAt: SEEN - 100 },
    expected: {
      kind: 'git',
      operation: 'reset',
      name: 'git reset on main',
      files: ['flows/ci/build.yml', 'flows/ci/test.yml'],
      edits: [],
    },
  },
  {
    description: '`git stash`: the stash’s reflog as new as HEAD’s reset, named stash',
    trail: {
      head: { message: 'reset: moving to HEAD', at: SEEN - 1000 },
      stash: { message: 'WIP on main: c03d591 seed', at: SEEN - 1000 },
      indexAt: SEEN - 900,
    },
    expected: {
      kind: 'git',
      operation: 'stash',
      name: 'git stash on main',
      files: ['flows/ci/build.yml', 'flows/ci/test.yml'],
      edits: [],
    },
  },
  {
    description: 'a rebase finishing on feat-x',
    trail: {
      head: { message: 'rebase (finish): returning to refs/heads/feat-x', at: SEEN - 100 },
      indexAt: SEEN - 100,
      branch: 'feat-x',
    },
    expected: {
      kind: 'git',
      operation: 'rebase',
      name: 'rebase of feat-x',
      files: ['flows/ci/build.yml', 'flows/ci/test.yml'],
      edits: [],
    },
  },
  {
    description: 'a pull that fast-forwards main',
    trail: { head: { message: 'pull: Fast-forward', at: SEEN - 100 }, indexAt: SEEN - 100 },
    expected: {
      kind: 'git',
      operation: 'pull',
      name: 'pull into main',
      files: ['flows/ci/build.yml', 'flows/ci/test.yml'],
      edits: [],
    },
  },
  {
    description:
      'a branch switch 3 s ago, then `checkout -- <paths>` now: the index is later, named checkout --',
    trail: {
      head: { message: 'checkout: moving from main to cleanup', at: SEEN - 3000 },
      indexAt: SEEN - 10,
      branch: 'cleanup',
    },
    expected: {
      kind: 'git',
      operation: 'checkout --',
      name: 'git checkout -- on cleanup',
      files: ['flows/ci/build.yml', 'flows/ci/test.yml'],
      edits: [],
    },
  },
  {
    description: 'right after a switch, a new file and an edit: nothing equals HEAD, the person’s',
    trail: {
      head: { message: 'checkout: moving from main to cleanup', at: SEEN - 400 },
      indexAt: SEEN - 300,
    },
    facts: {
      files: [
        { path: 'flows/ci/new.yml', equalsHead: false },
        { path: 'flows/ci/build.yml', equalsHead: false },
      ],
    },
    expected: { kind: 'edit' },
  },
];

describe('git’s motion or a person’s edit', () => {
  for (const row of rows)
    it(row.description, () => {
      expect(
        gitMotionOf({
          trail: { ...quiet, ...row.trail },
          seenAt: SEEN,
          now: SEEN + 500,
          files: reverted,
          ...row.facts,
        }),
      ).toEqual(row.expected);
    });
});

describe('whether git’s motions wait for a person', () => {
  const rows: { description: string; setting: 'ask' | 'send'; shared: boolean; holds: boolean }[] = [
    {
      description: 'a service others write to, setting ask: held',
      setting: 'ask',
      shared: true,
      holds: true,
    },
    {
      description: 'nobody else writes (the embedded service alone): sent',
      setting: 'ask',
      shared: false,
      holds: false,
    },
    {
      description: 'shared, but the repository says send: sent',
      setting: 'send',
      shared: true,
      holds: false,
    },
  ];
  for (const row of rows) it(row.description, () => expect(holdsGitMotions(row)).toBe(row.holds));
});
