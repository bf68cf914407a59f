import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { flowHashInput } from '../../src/protocol/index.ts';
import { SyncState } from '../../src/sync/index.ts';

/**
 * The look at the service compares each flow's aggregate with what this checkout acknowledged (issue 50: at
 * 100,000 files, reading them as rows was most of `flowsync status`'s CPU; SQLite now puts each flow's lines
 * together). What it reads must be flowHashInput's string exactly, or a flow in sync would be listed file by file
 * at each look: the same lines in the same order, SQLite's byte order where it is not JavaScript's included.
 */
describe('acknowledgedInputs is flowHashInput of each flow with acknowledged files', () => {
  let state: SyncState;
  let repoId: number;
  beforeEach(() => {
    state = new SyncState(':memory:');
    repoId = state.ensureRepo('/r', 'http://svc', 'acme', 'app');
  });
  afterEach(() => state.close());

  const local = (flowPath: string, path: string) =>
    state.saveLocal(repoId, [{ flowPath, path, size: 1, mtimeMs: 1, localHash: 'disk', warning: null }]);
  const ack = (flowPath: string, path: string, hash: string) => {
    local(flowPath, path);
    state.acknowledge(repoId, [{ flowPath, stored: [{ path, hash, fileId: null }], dropped: [] }]);
  };

  const rows: { what: string; acked: [string, string][]; notAcked?: string[] }[] = [
    { what: 'one file', acked: [['a.yaml', 'h1']] },
    {
      what: 'files acknowledged out of order',
      acked: [
        ['b.yaml', 'h2'],
        ['a.yaml', 'h1'],
        ['c/d.yaml', 'h3'],
      ],
    },
    {
      what: 'a path that begins another',
      acked: [
        ['a', 'h1'],
        ['a.yaml', 'h2'],
        ['a/b', 'h3'],
      ],
    },
    {
      what: 'upper case before lower case',
      acked: [
        ['b', 'h1'],
        ['B', 'h2'],
        ['a', 'h3'],
      ],
    },
    {
      // UTF-8's byte order puts U+FF5E before U+1F600; UTF-16's code units put it after (0xFF5E > 0xD83D).
      what: 'a character above U+FFFF beside one from U+E000 up',
      acked: [
        ['\u{1F600}.yaml', 'h1'],
        ['\uFF5E.yaml', 'h2'],
        ['\uE000.yaml', 'h3'],
      ],
    },
    {
      what: 'a file on disk never acknowledged is not in it',
      acked: [['a.yaml', 'h1']],
      notAcked: ['b.yaml'],
    },
  ];

  for (const row of rows)
    it(row.what, () => {
      for (const [path, hash] of row.acked) ack('flows/x', path, hash);
      for (const path of row.notAcked ?? []) local('flows/x', path);
      const expected = flowHashInput(row.acked.map(([path, hash]) => ({ path, hash })));
      expect(new Map(state.acknowledgedInputs(repoId))).toEqual(new Map([['flows/x', expected]]));
    });

  it('a flow with no acknowledged file is not in it; each flow has its own', () => {
    local('flows/none', 'a.yaml');
    ack('flows/y', 'a.yaml', 'h1');
    ack('flows/x', 'a.yaml', 'h2');
    expect(new Map(state.acknowledgedInputs(repoId))).toEqual(
      new Map([
        ['flows/x', flowHashInput([{ path: 'a.yaml', hash: 'h2' }])],
        ['flows/y', flowHashInput([{ path: 'a.yaml', hash: 'h1' }])],
      ]),
    );
  });

  it('hasAcknowledged says whether any file is', () => {
    local('flows/x', 'a.yaml');
    expect(state.hasAcknowledged(repoId)).toBe(false);
    ack('flows/x', 'b.yaml', 'h1');
    expect(state.hasAcknowledged(repoId)).toBe(true);
  });
});
