import { describe, expect, it } from 'vitest';
import { SyncState } from '../../src/sync/index.ts';

/**
 * markGoneUnder finds a folder's files by ranges of the state's primary key (issue 21: testing every key made
 * mass deletions quadratic). The ranges must take exactly what is below the folder: not a sibling whose name
 * continues it (`a-b`, `a.b`, `a0`: '-' and '.' sort before '/', '0' right after it), wherever the folder is.
 */
describe('markGoneUnder', () => {
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
    ['nested/flows/c', 'main.yaml'],
    ['other/d', 'main.yaml'],
  ] as const;

  const goneAfter = (folder: string): string[] => {
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
    // Acknowledged, so that a file marked gone stays as a pending deletion instead of being forgotten.
    state.acknowledge(repoId, [
      ...[...new Set(keys.map(([flowPath]) => flowPath))].map((flowPath) => ({
        flowPath,
        stored: keys.filter(([f]) => f === flowPath).map(([, path]) => ({ path, hash: 'h', fileId: null })),
        dropped: [],
      })),
    ]);
    state.markGoneUnder(repoId, folder);
    const gone = state
      .files(repoId)
      .filter((file) => file.localHash === null)
      .map((file) => `${file.flowPath}/${file.path}`)
      .sort();
    state.close();
    return gone;
  };

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
    expect(goneAfter('flows')).toHaveLength(10);
    expect(goneAfter('nested')).toEqual(['nested/flows/c/main.yaml']);
    expect(goneAfter('flows/a/main.yaml')).toEqual([]);
  });
});
