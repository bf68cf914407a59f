import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { SyncState } from '../../src/sync/index.ts';

/**
 * The state's counts are one pass over the files (issue 50: `flowsync status` and every engine status read them at
 * 100,000 files). Their `pendingFlows` must stay the number of flows a round would send (`pendingFlows()`: those
 * with a pending file, and those sent without an answer), whatever mix of the two the state holds.
 */
describe('counts.pendingFlows is the number of flows pendingFlows() lists', () => {
  let state: SyncState;
  let repoId: number;
  beforeEach(() => {
    state = new SyncState(':memory:');
    repoId = state.ensureRepo('/r', 'http://svc', 'acme', 'app');
  });
  afterEach(() => state.close());

  const local = (flowPath: string, path: string, localHash: string) =>
    state.saveLocal(repoId, [{ flowPath, path, size: 1, mtimeMs: 1, localHash, warning: null }]);
  const ack = (flowPath: string, path: string, hash: string) =>
    state.acknowledge(repoId, [{ flowPath, stored: [{ path, hash, fileId: null }], dropped: [] }]);
  const sending = (...flowPaths: string[]) =>
    state.markSending(
      repoId,
      flowPaths.map((flowPath) => ({ flowPath })),
    );
  const conflict = (flowPath: string, path: string) =>
    state.recordConflicts(repoId, [
      { flowPath, path, baseHash: 'h1', serviceHash: 'h3', sentHash: 'h2', writtenBy: null, writtenAt: null },
    ]);

  const rows: { what: string; given: () => void; flows: string[] }[] = [
    { what: 'nothing on disk, nothing sent', given: () => undefined, flows: [] },
    {
      what: 'every file acknowledged as it is',
      given: () => {
        local('flows/a', 'x', 'h1');
        ack('flows/a', 'x', 'h1');
      },
      flows: [],
    },
    {
      what: 'two pending files of one flow count as one flow',
      given: () => {
        local('flows/a', 'x', 'h1');
        local('flows/a', 'y', 'h1');
      },
      flows: ['flows/a'],
    },
    {
      what: 'pending files in two flows',
      given: () => {
        local('flows/a', 'x', 'h1');
        local('flows/b', 'y', 'h1');
      },
      flows: ['flows/a', 'flows/b'],
    },
    {
      what: 'a flow sent without an answer that also has a pending file counts once',
      given: () => {
        local('flows/a', 'x', 'h1');
        sending('flows/a');
      },
      flows: ['flows/a'],
    },
    {
      what: 'a flow sent without an answer, nothing of it pending, and one gone from disk entirely',
      given: () => {
        local('flows/a', 'x', 'h1');
        ack('flows/a', 'x', 'h1');
        sending('flows/a', 'flows/gone');
      },
      flows: ['flows/a', 'flows/gone'],
    },
    {
      what: 'a flow whose only changed file is in conflict is not pending, unless it was sent without an answer',
      given: () => {
        local('flows/a', 'x', 'h2');
        ack('flows/a', 'x', 'h1');
        conflict('flows/a', 'x');
        local('flows/b', 'y', 'h2');
        ack('flows/b', 'y', 'h1');
        conflict('flows/b', 'y');
        sending('flows/b');
      },
      flows: ['flows/b'],
    },
  ];

  for (const row of rows)
    it(row.what, () => {
      row.given();
      expect(state.pendingFlows(repoId).sort()).toEqual(row.flows);
      expect(state.counts(repoId).pendingFlows).toBe(row.flows.length);
    });
});
