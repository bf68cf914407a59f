import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { SyncState } from '../../src/sync/state.ts';

/**
 * The held set and its user's word, as the state keeps them (issue 45): what `look` tells deletionVerdict after each
 * step a checkout lives through, on a real state file closed and opened again (a restart).
 */
let dir: string;
let path: string;
let state: SyncState;
let repoId: number;
const flowPath = 'flows/ci';

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'flowsync-marks-'));
  path = join(dir, 'state.db');
  state = new SyncState(path);
  repoId = state.ensureRepo('/r', 'http://svc', 'acme', 'app');
  const files = Array.from({ length: 6 }, (_, i) => ({
    flowPath,
    path: `f${i}`,
    size: 1,
    mtimeMs: 1,
    localHash: 'h1',
    warning: null,
  }));
  state.saveLocal(repoId, files);
  state.acknowledge(repoId, [
    { flowPath, stored: files.map((f) => ({ path: f.path, hash: 'h1', fileId: null })), dropped: [] },
  ]);
});
afterEach(() => {
  state.close();
  rmSync(dir, { recursive: true, force: true });
});

const gone = (...paths: string[]) =>
  state.markGone(
    repoId,
    paths.map((p) => ({ flowPath, path: p })),
  );
const back = (...paths: string[]) =>
  state.saveLocal(
    repoId,
    paths.map((p) => ({ flowPath, path: p, size: 1, mtimeMs: 2, localHash: 'h1', warning: null })),
  );
const restart = () => {
  state.close();
  state = new SyncState(path);
};

describe('the deletions that wait for their user, in the state', () => {
  it('a held set shrinks with a partial undo, survives a restart, takes in new deletions, and empties when all are back', () => {
    gone('f0', 'f1', 'f2', 'f3');
    expect(state.deletions.look(repoId)).toEqual({ waiting: 4, confirmed: 0, held: 0 });
    state.deletions.hold(repoId);
    expect(state.deletions.look(repoId)).toEqual({ waiting: 4, confirmed: 0, held: 4 });
    back('f0');
    expect(state.deletions.look(repoId)).toEqual({ waiting: 3, confirmed: 0, held: 3 });
    restart();
    expect(state.deletions.look(repoId)).toEqual({ waiting: 3, confirmed: 0, held: 3 });
    // A deletion made since is not in the set until the guard holds it with the others (deletionVerdict: `held` > 0).
    gone('f4');
    expect(state.deletions.look(repoId)).toEqual({ waiting: 4, confirmed: 0, held: 3 });
    state.deletions.hold(repoId);
    expect(state.deletions.look(repoId)).toEqual({ waiting: 4, confirmed: 0, held: 4 });
    back('f1', 'f2', 'f3', 'f4');
    expect(state.deletions.look(repoId)).toEqual({ waiting: 0, confirmed: 0, held: 0 });
    // Deleted again later: a new question, not the old set.
    gone('f1');
    expect(state.deletions.look(repoId)).toEqual({ waiting: 1, confirmed: 0, held: 0 });
  });

  it('a confirmation lasts through a round refused and a restart, until the service takes the deletion', () => {
    gone('f0', 'f1', 'f2');
    state.deletions.hold(repoId);
    expect(state.deletions.confirm(repoId).map((f) => f.path)).toEqual(['f0', 'f1', 'f2']);
    expect(state.deletions.look(repoId)).toEqual({ waiting: 3, confirmed: 3, held: 0 });
    // The service refused the flow: f2 is in conflict (it waits for its user), f0 and f1 stay confirmed.
    state.recordConflicts(repoId, [
      {
        flowPath,
        path: 'f2',
        baseHash: 'h1',
        serviceHash: 'h2',
        sentHash: null,
        writtenBy: null,
        writtenAt: null,
      },
    ]);
    restart();
    expect(state.deletions.look(repoId)).toEqual({ waiting: 2, confirmed: 2, held: 0 });
    expect(state.deletions.confirmed(repoId).map((f) => f.path)).toEqual(['f0', 'f1']);
    // A deletion made after the word is not confirmed by it.
    gone('f3');
    expect(state.deletions.look(repoId)).toEqual({ waiting: 3, confirmed: 2, held: 0 });
    state.acknowledge(repoId, [{ flowPath, stored: [], dropped: ['f0', 'f1'] }]);
    expect(state.deletions.look(repoId)).toEqual({ waiting: 1, confirmed: 0, held: 0 });
    const asked = ['f0', 'f1', 'f2'].map((p) => ({ flowPath, path: p }));
    expect(state.deletions.taken(repoId, asked)).toBe(2);
  });

  it('a word on some files confirms those of them that are deletions waiting, nothing else', () => {
    gone('f0', 'f1');
    const files = ['f0', 'f5'].map((p) => ({ flowPath, path: p }));
    expect(state.deletions.confirm(repoId, files)).toEqual([{ flowPath, path: 'f0' }]);
    expect(state.deletions.look(repoId)).toEqual({ waiting: 2, confirmed: 1, held: 0 });
  });
});
