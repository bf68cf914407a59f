import { describe, expect, it } from 'vitest';
import { SyncState } from '../../src/sync/index.ts';

/**
 * The state's files below a folder, taken by markGoneUnder and counted by presentCountBelow, are exactly those a path
 * test would take, on keys made to be near misses: siblings whose names continue a folder's (`a-b`, `a.b`, `a0`), a
 * flow's own entry (path ''), nested roots.
 */
const KEYS = [
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

/**
 * A state whose repository has KEYS on disk, each acknowledged (so that a file marked gone stays as a
 * pending deletion instead of being forgotten), given to `use` and closed after.
 */
function withKeys<T>(use: (state: SyncState, repoId: number) => T): T {
  const state = new SyncState(':memory:');
  try {
    const repoId = state.ensureRepo('/repo', 'embedded', 'acme', 'app');
    state.saveLocal(
      repoId,
      KEYS.map(([flowPath, path]) => ({
        flowPath,
        path,
        size: 1,
        mtimeMs: 1,
        localHash: 'h',
        warning: null,
      })),
    );
    state.acknowledge(
      repoId,
      [...new Set(KEYS.map(([flowPath]) => flowPath))].map((flowPath) => ({
        flowPath,
        stored: KEYS.filter(([f]) => f === flowPath).map(([, path]) => ({ path, hash: 'h', fileId: null })),
        dropped: [],
      })),
    );
    return use(state, repoId);
  } finally {
    state.close();
  }
}

/**
 * markGoneUnder finds a folder's files by ranges of the state's primary key (issue 21: testing every key made
 * mass deletions quadratic). The ranges must take exactly what is below the folder: not a sibling whose name
 * continues it (`a-b`, `a.b`, `a0`: '-' and '.' sort before '/', '0' right after it), wherever the folder is.
 */
describe('markGoneUnder', () => {
  const goneAfter = (folder: string): string[] =>
    withKeys((state, repoId) => {
      state.markGoneUnder(repoId, folder);
      return state
        .files(repoId)
        .filter((file) => file.localHash === null)
        .map((file) => `${file.flowPath}/${file.path}`)
        .sort();
    });

  it('takes a folder inside a flow, and nothing beside it', () => {
    expect(goneAfter('flows/a/sub')).toEqual(['flows/a/sub/deeper/y.yaml', 'flows/a/sub/x.yaml']);
  });

  it('takes a flow, its own entry included, and not the flows whose names continue it', () => {
    expect(goneAfter('flows/a')).toEqual([
      'flows/a/',
      'flows/a/main.yaml',
      'flows/a/sub-b/z.yaml',
      'flows/a/sub.b',
      'flows/a/sub/deeper/y.yaml',
      'flows/a/sub/x.yaml',
      'flows/a/sub0',
    ]);
  });

  it('takes every flow below a flow root, and a root below a folder', () => {
    expect(goneAfter('flows')).toHaveLength(11);
    expect(goneAfter('nested')).toEqual(['nested/flows/c/main.yaml']);
    expect(goneAfter('flows/a/main.yaml')).toEqual([]);
  });
});

/**
 * A rescan that saw as many of the state's files on disk as presentCountBelow counts below the folders it scanned
 * skips looking for the ones it did not see (reconciler.ts). So the count must be exactly the files the rescan's
 * own test (`flowPath/path` starting with a folder and a slash) takes: a count too high only costs the look, a
 * count too low would hide a deleted file. Also a file gone from disk, and nested and repeated folders.
 */
describe('presentCountBelow', () => {
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
    withKeys((state, repoId) => {
      // Gone from disk: a row the state keeps, not a file it has on disk.
      state.markGone(repoId, [{ flowPath: 'flows/gone', path: 'main.yaml' }]);
      expect(state.presentCountBelow(repoId, folders)).toBe(count);
      expect(byTheRescansTest(state, repoId, folders)).toBe(count);
    });
  });
});
