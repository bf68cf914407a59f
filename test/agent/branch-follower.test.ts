import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { BranchFollower } from '../../src/agent/branch-follower.ts';
import type { SyncReport } from '../../src/sync/index.ts';

/** A checkout is a folder with `.git/HEAD`: what git writes on a switch is what this test writes. */
let root: string;
const head = (content: string) => writeFileSync(join(root, '.git/HEAD'), content);

beforeEach(() => {
  root = mkdtempSync(join(tmpdir(), 'flowsync-branch-'));
  mkdirSync(join(root, '.git'));
  head('ref: refs/heads/main\n');
});
afterEach(() => rmSync(root, { recursive: true, force: true }));

function report(
  sent: Partial<Pick<SyncReport, 'created' | 'updated' | 'deleted'>>,
  conflicts = 0,
): SyncReport {
  return {
    files: [],
    conflicts: Array.from({ length: conflicts }, (_, n) => ({
      flowPath: 'flows/ci',
      path: `${n}.yml`,
      writtenBy: null,
    })),
    flows: 1,
    created: 0,
    updated: 0,
    deleted: 0,
    ...sent,
    rejected: [],
    requests: 1,
    ms: 1,
  };
}

describe('following the branch from round to round', () => {
  it('says nothing while HEAD stays, and sums the rounds after a switch into one, with what was held at the end', () => {
    const branch = new BranchFollower(root);
    branch.round(null);
    branch.round(report({ updated: 1 }));
    expect(branch.switching).toBe(false);
    expect(branch.rested(0)).toBeNull();

    head('ref: refs/heads/feat-x\n');
    branch.round(null);
    expect(branch.switching).toBe(true);
    branch.round(report({ created: 2, updated: 1 }, 1));
    branch.round(report({ deleted: 3 }));
    expect(branch.rested(212)).toEqual({
      from: 'main',
      to: 'feat-x',
      changed: 6,
      heldDeletions: 212,
      conflicts: 1,
      refused: 0,
    });
    expect(branch.switching).toBe(false);
    expect(branch.rested(212)).toBeNull();

    // A detached HEAD, noticed by a round that sent nothing (all it had were deletions, held).
    head('1a2b3c4d5e6f708192a3b4c5d6e7f8091a2b3c4d\n');
    branch.round(null);
    expect(branch.rested(40)).toMatchObject({ from: 'feat-x', to: 'detached at 1a2b3c4', changed: 0 });
    expect(branch.branch).toBe('detached at 1a2b3c4');
  });
});
