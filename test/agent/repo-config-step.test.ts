import { describe, expect, it } from 'vitest';
import {
  repoConfigSave,
  repoConfigStep,
  type RepoConfigSave,
  type RepoConfigStep,
} from '../../src/agent/repo-config-step.ts';

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

describe('repoConfigSave: a Save from the Repo config screen against the file as it loaded it and as it is now', () => {
  // Hashes of the file's bytes: A as the screen loaded it, B a hand edit since, M what the save writes.
  const M = 'd'.repeat(64);
  const rows: [string, string | null, string | null, boolean, RepoConfigSave][] = [
    ['the file as the screen loaded it: saved over (its user edited what they saw)', A, A, false, 'save'],
    ['no file when loaded and none now: saved, the file made', null, null, false, 'save'],
    ['edited by hand since it loaded: a conflict, nothing written or sent', A, B, false, 'file-changed'],
    ['made by hand since the screen loaded none: a conflict', null, B, false, 'file-changed'],
    [
      'deleted by hand since it loaded: a conflict (the save would make it again)',
      A,
      null,
      false,
      'file-changed',
    ],
    ['edited by hand to exactly what the save writes: saved, nothing lost', A, M, false, 'save'],
    ['unchanged and already what the save writes: saved (sent as before)', M, M, false, 'save'],
    [
      'take mine over the file the conflict showed: its content kept beside it first',
      B,
      B,
      true,
      'save-keeping-the-file',
    ],
    [
      'take mine, but the file changed again since the conflict: a conflict again',
      B,
      C,
      true,
      'file-changed',
    ],
    ['take mine over a file deleted by hand: nothing to keep, saved', null, null, true, 'save'],
    ['take mine over a file that already holds mine: nothing to keep, saved', B, M, true, 'save'],
  ];
  it.each(rows)('%s', (_, loaded, disk, takeMine, save) => {
    expect(repoConfigSave(loaded, disk, M, takeMine)).toBe(save);
  });
});
