import { describe, expect, it } from 'vitest';
import { SyncState } from '../../src/sync/index.ts';

/**
 * A rescan that saw as many of the state's files on disk as presentCountBelow counts below the folders it scanned
 * skips looking for the ones it did not see (reconciler.ts). So the count must be exactly the files the rescan's
 * own test (`flowPath/path` starting with a folder and a slash) takes: a count too high only costs the look, a
 * count too low would hide a deleted file. Siblings whose names continue a folder's (`a-b`, `a.b`, `a0`), a flow's
 * own entry (path ''), files gone from disk, nested and repeated folders.
 */
describe('presentCountBelow', () => {
  const keys = [
    ['flows/a', 'main.yaml'],
    ['flows/a', 'sub/x.yaml'],
    ['flows/a', 'sub/deeper/y.yaml'],
    ['flows/a', 'sub-b/z.yaml'],
    ['flows/a', 'sub.b'],
    ['flows/a', 'sub0'],
    ['flows/a-b', 'main.yaml'],
    ['flows/a.b', 'main.yaml'],
    ['flows/a0', 'main.yaml'],
    ['flows/a', ''],
    ['flows/gone', 'main.yaml'],
    ['nested/flows/c', 'main.yaml'],
    ['other/d', 'main.yaml'],
  ] as const;

  const withState = <T>(use: (state: SyncState, repoId: number) => T): T => {
    const state = new SyncState(':memory:');
    const repoId = state.ensureRepo('/repo', 'embedded', 'acme', 'app');
    state.saveLocal(
      repoId,
      keys.map(([flowPath, path]) => ({
        flowPath,
        path,
        size: 1,
        mtimeMs: 1,
        localHash: 'h',
        warning: null,
      })),
    );
    // Acknowledged and then gone from disk: a row the state keeps, not a file it has on disk.
    state.acknowledge(repoId, [
      { flowPath: 'flows/gone', stored: [{ path: 'main.yaml', hash: 'h', fileId: null }], dropped: [] },
    ]);
    state.markGone(repoId, [{ flowPath: 'flows/gone', path: 'main.yaml' }]);
    try {
      return use(state, repoId);
    } finally {
      state.close();
    }
  };

  /** What the rescan's look at each file it did not see takes: present, and below one of the folders. */
  const byTheRescansTest = (state: SyncState, repoId: number, folders: readonly string[]) =>
    [...state.presentFiles(repoId)].filter(({ flowPath, path }) =>
      folders.some((folder) => `${flowPath}/${path}`.startsWith(`${folder}/`)),
    ).length;

  it.each([
    [['flows'], 10],
    [['flows/a'], 7],
    [['flows/a/sub'], 2],
    [['flows/a', 'flows/a/sub'], 7],
    [['flows/a', 'flows/a'], 7],
    [['flows/a/sub', 'flows/a-b'], 3],
    [['flows', 'nested/flows', 'other'], 12],
    [['flows/gone'], 0],
    [['flow'], 0],
    [[], 0],
  ] as const)('below %j: %i, as many as the rescan would look at', (folders, count) => {
    withState((state, repoId) => {
      expect(state.presentCountBelow(repoId, folders)).toBe(count);
      expect(byTheRescansTest(state, repoId, folders)).toBe(count);
    });
  });
});
