import { describe, expect, it } from 'vitest';
import { repoConfigStep, type RepoConfigStep } from '../../src/agent/repo-config-step.ts';

const [A, B, C] = ['a'.repeat(64), 'b'.repeat(64), 'c'.repeat(64)];

describe('repoConfigStep: the repository config on disk against its base and a conflict', () => {
  const rows: [string, string, string | null, string | null, RepoConfigStep][] = [
    ['never synced: sent (on "none")', A, null, null, 'send'],
    ['equal to what was last synced: nothing to send (a restart sends nothing)', A, A, null, 'in-sync'],
    ['edited since: sent on its base', B, A, null, 'send'],
    ['a conflict stands: nothing sent, its user chooses', B, A, C, 'wait'],
    ['a conflict stands and the disk holds its base again: still waits', A, A, C, 'wait'],
    ["the disk now holds the service's config: settled", C, A, C, 'settled'],
  ];
  it.each(rows)('%s', (_, disk, base, conflict, step) => {
    expect(repoConfigStep(disk, base, conflict)).toBe(step);
  });
});
