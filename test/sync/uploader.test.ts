import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { InvalidArgsError, RemoteError } from '../../src/client/index.ts';
import { SYNC_CALL_LIMITS } from '../../src/protocol/index.ts';
import { planUploads, plansKey, type FlowPlan } from '../../src/sync/planner.ts';
import { SyncState } from '../../src/sync/state.ts';
import {
  chunkPlans,
  isSingleUpdate,
  listingOverCap,
  MAX_FLOWS_PER_BATCH,
  refusalOf,
  runInLanes,
  sendWithBisection,
} from '../../src/sync/uploader.ts';
import { memoryStateEachTest } from '../support/memory-state.ts';

const PATH = 'svc/flow_def/action/sync_batch/run';
const refused = (status: number, errorData: Record<string, unknown> = {}) =>
  new RemoteError(PATH, status, 'no', { reason: 'refused', ...errorData }, 'trace-1');

describe('refusalOf: which errors are about the content (not retried as they are)', () => {
  it('names the flow at fault from the path the service gives, and explains a body too large', () => {
    expect(refusalOf(refused(422, { path: ['flows', 3, 'files', 0, 'path'] }))).toEqual({
      message: 'no (HTTP 422)',
      flowIndex: 3,
    });
    expect(refusalOf(refused(400, { issues: [{ path: ['flows', 1], message: 'bad' }] }))?.flowIndex).toBe(1);
    expect(refusalOf(refused(413))).toEqual({
      message: 'the flow is larger than the service accepts in one request',
      flowIndex: null,
    });
    const invalid = new InvalidArgsError(PATH, [{ path: ['flows', 2, 'flow_path'], message: 'x' }], 'x');
    expect(refusalOf(invalid)?.flowIndex).toBe(2);
  });

  it('leaves what is worth retrying to the back-off: 401, 403, 408, 429, 5xx, no answer', () => {
    for (const status of [401, 403, 404, 408, 429, 500, 502, 503])
      expect(refusalOf(refused(status))).toBeNull();
    expect(refusalOf(new Error('ECONNRESET'))).toBeNull();
  });
});

function plan(flowPath: string, sizes: number[], extra: Partial<FlowPlan> = {}): FlowPlan {
  const files = sizes.map((size, i) => ({
    flowPath,
    path: `f${i}.yaml`,
    size,
    mtimeMs: 1,
    localHash: `h${i}`,
    warning: null,
    ackedHash: null,
    fileId: null,
  }));
  return {
    flowPath,
    upserts: files,
    deletes: [],
    present: files,
    signature: flowPath,
    uncertain: false,
    full: false,
    bases: false,
    ...extra,
  };
}

describe('chunkPlans', () => {
  it('cuts batches at the flow limit and at the byte limit; a flow over the byte limit goes alone', () => {
    const limits = { flows: 3, bytes: 10_000 };
    const plans = ['a', 'b', 'c', 'd'].map((name) => plan(`flows/${name}`, [100]));
    expect(chunkPlans(plans, false, limits).map((b) => b.plans.length)).toEqual([3, 1]);
    const heavy = [plan('flows/a', [4000]), plan('flows/b', [4000]), plan('flows/huge', [50_000])];
    expect(chunkPlans(heavy, true, limits).map((b) => b.plans.map((p) => p.flowPath))).toEqual([
      ['flows/a', 'flows/b'],
      ['flows/huge'],
    ]);
    expect(chunkPlans(heavy, true, limits).every((b) => b.full)).toBe(true);
  });

  it('counts the full listing for a full batch and only the changes otherwise', () => {
    const limits = { flows: 10, bytes: 10_000 };
    const big = plan('flows/a', [5000, 5000]);
    const onlyOneChanged = { ...big, upserts: big.upserts.slice(0, 1) };
    const plans = [onlyOneChanged, plan('flows/b', [100])];
    expect(chunkPlans(plans, false, limits)).toHaveLength(1);
    expect(chunkPlans(plans, true, limits)).toHaveLength(2);
    expect(MAX_FLOWS_PER_BATCH).toBe(200);
  });
});

describe('a flow over the caps per call', () => {
  it('sends its changed files in parts under the file cap, each part a batch of its own', () => {
    const big = plan(
      'flows/big',
      Array.from({ length: 7 }, () => 1),
    );
    const batches = chunkPlans([plan('flows/a', [1]), big], false, { flows: 10, bytes: 1e9, files: 3 });
    expect(batches.map((b) => [b.partOf, b.plans[0]!.upserts.length])).toEqual([
      [undefined, 1],
      ['flows/big', 3],
      ['flows/big', 3],
      ['flows/big', 1],
    ]);
  });

  it('names the cap a full listing goes over', () => {
    const many = plan(
      'flows/big',
      Array.from({ length: SYNC_CALL_LIMITS.files + 1 }, () => 1),
    );
    expect(listingOverCap(many)).toBe(
      "30,001 files, over the 8,192 files a service of the spec takes in one flow's listing",
    );
    expect(listingOverCap(plan('flows/a', [100]))).toBeNull();
  });
});

describe('runInLanes', () => {
  it('runs tasks in order with at most two at once', async () => {
    let running = 0;
    let most = 0;
    const started: number[] = [];
    const tasks = Array.from({ length: 7 }, (_, i) => async () => {
      started.push(i);
      most = Math.max(most, ++running);
      await sleep(i % 3);
      running--;
    });
    await runInLanes(tasks, 2);
    expect(started).toEqual([0, 1, 2, 3, 4, 5, 6]);
    expect(most).toBe(2);
  });

  it('after a failure starts nothing new, lets the running task finish, then throws the failure', async () => {
    const finished: number[] = [];
    const tasks = [
      async () => {
        await sleep(20);
        finished.push(0);
      },
      async () => {
        throw new Error('no answer');
      },
      async () => {
        finished.push(2);
      },
    ];
    await expect(runInLanes(tasks, 2)).rejects.toThrow('no answer');
    expect(finished).toEqual([0]);
  });
});

describe('sendWithBisection', () => {
  /** A service that refuses any request holding a bad flow, naming it or not. */
  function service(bad: Set<string>, names: boolean) {
    const requests: string[][] = [];
    const send = async (plans: string[]) => {
      requests.push(plans);
      const at = plans.findIndex((p) => bad.has(p));
      if (at >= 0) throw refused(422, names ? { path: ['flows', at, 'path'] } : {});
    };
    return { requests, send };
  }

  it('drops the flow the refusal names and sends the others in one more request', async () => {
    const { requests, send } = service(new Set(['c']), true);
    const rejected: string[] = [];
    await sendWithBisection(['a', 'b', 'c', 'd'], send, (p) => rejected.push(p));
    expect(rejected).toEqual(['c']);
    expect(requests).toEqual([
      ['a', 'b', 'c', 'd'],
      ['a', 'b', 'd'],
    ]);
  });

  it('halves a batch until it finds the flows at fault when the refusal does not name them', async () => {
    const { requests, send } = service(new Set(['b', 'g']), false);
    const rejected: string[] = [];
    await sendWithBisection(['a', 'b', 'c', 'd', 'e', 'f', 'g', 'h'], send, (p) => rejected.push(p));
    expect(rejected).toEqual(['b', 'g']);
    const delivered = requests.filter((r) => !r.some((p) => p === 'b' || p === 'g')).flat();
    expect(delivered.sort()).toEqual(['a', 'c', 'd', 'e', 'f', 'h']);
    expect(requests.length).toBeLessThanOrEqual(1 + 2 * 2 * 3);
  });

  it('isolates a flow the service answers 500 for while it is up: the others go through', async () => {
    const requests: string[][] = [];
    const send = async (plans: string[]) => {
      requests.push(plans);
      if (plans.includes('f')) throw refused(500);
    };
    const failed: string[] = [];
    const isolate = { failed: (p: string) => failed.push(p), alive: async () => true, answered: () => {} };
    const plans = ['a', 'b', 'c', 'd', 'e', 'f', 'g', 'h'];
    await sendWithBisection(plans, send, () => {}, isolate);
    expect(failed).toEqual(['f']);
    const delivered = requests.filter((r) => !r.includes('f')).flat();
    expect(delivered.sort()).toEqual(['a', 'b', 'c', 'd', 'e', 'g', 'h']);
    expect(requests.length).toBeLessThanOrEqual(1 + 2 * 3);
  });

  it('throws a 500 when the service is not up (nothing narrows it down)', async () => {
    const error = refused(500);
    const isolate = { failed: () => {}, alive: async () => false, answered: () => {} };
    await expect(
      sendWithBisection(
        ['a', 'b'],
        () => Promise.reject(error),
        () => {},
        isolate,
      ),
    ).rejects.toBe(error);
  });

  it('throws what is not a refusal, for the back-off', async () => {
    const error = refused(503);
    await expect(
      sendWithBisection(
        ['a', 'b'],
        () => Promise.reject(error),
        () => {},
      ),
    ).rejects.toBe(error);
  });
});

describe('the planner, on a real state file', () => {
  const fixture = memoryStateEachTest();
  const { local, ack } = fixture;

  it('plans changed files only, a full listing when a file is gone, nothing when in sync', () => {
    local('flows/a', 'x', 'h1');
    local('flows/b', 'y', 'h1');
    local('flows/b', 'z', 'h1');
    ack('flows/b', 'y', 'h1');
    ack('flows/b', 'z', 'h1');
    fixture.state.markGone(fixture.repoId, [{ flowPath: 'flows/b', path: 'z' }]);
    const { plans } = planUploads(fixture.state, fixture.repoId);
    expect(plans.map((p) => [p.flowPath, p.full, p.upserts.length, p.deletes.length])).toEqual([
      ['flows/a', false, 1, 0],
      ['flows/b', true, 0, 1],
    ]);
  });

  it('sends a flow whose request went unanswered as a full listing, even with no file pending or left', () => {
    local('flows/a', 'x', 'h1');
    ack('flows/a', 'x', 'h1');
    fixture.state.markSending(fixture.repoId, [{ flowPath: 'flows/a' }, { flowPath: 'flows/gone' }]);
    const { plans } = planUploads(fixture.state, fixture.repoId);
    expect(plans.map((p) => [p.flowPath, p.full, p.uncertain, p.present.length])).toEqual([
      ['flows/a', true, true, 1],
      ['flows/gone', true, true, 0],
    ]);
    expect(fixture.state.counts(fixture.repoId)).toMatchObject({ pending: 2, pendingFlows: 2 });
    expect(plans.some(isSingleUpdate)).toBe(false);
    fixture.state.acknowledge(fixture.repoId, [{ flowPath: 'flows/a', stored: [], dropped: [] }]);
    fixture.state.forgetSent(fixture.repoId, ['flows/gone']);
    expect(planUploads(fixture.state, fixture.repoId).plans).toEqual([]);
  });

  it('uses update_file only for a single changed file whose id is known', () => {
    local('flows/a', 'x', 'h1');
    ack('flows/a', 'x', 'h1', 'id-1');
    local('flows/a', 'x', 'h2');
    expect(planUploads(fixture.state, fixture.repoId).plans.map(isSingleUpdate)).toEqual([true]);
  });

  it('never uses update_file for a flow that also deletes: the deletion would be left out of the round', () => {
    // Found by issue 45's conflict-copy test: one edit and one deletion in a flow went as update_file, `sync` said
    // "+0 ~1 -0" and exited 0 with the deletion still pending.
    local('flows/a', 'x', 'h1');
    ack('flows/a', 'x', 'h1', 'id-1');
    local('flows/a', 'y', 'h3');
    ack('flows/a', 'y', 'h3', 'id-2');
    local('flows/a', 'x', 'h2');
    fixture.state.markGone(fixture.repoId, [{ flowPath: 'flows/a', path: 'y' }]);
    const plans = planUploads(fixture.state, fixture.repoId, undefined, { bases: true }).plans;
    expect(plans.map((p) => [p.upserts.length, p.deletes.length])).toEqual([[1, 1]]);
    expect(plans.map(isSingleUpdate)).toEqual([false]);
  });

  it('keys plans by what they would do: an acknowledgement or a read recorded changes the key', () => {
    local('flows/a', 'x', 'stale');
    ack('flows/a', 'x', 'h1');
    const before = plansKey(planUploads(fixture.state, fixture.repoId).plans);
    expect(plansKey(planUploads(fixture.state, fixture.repoId).plans)).toBe(before);
    fixture.state.recordReads(fixture.repoId, [
      { flowPath: 'flows/a', path: 'x', expected: 'stale', read: { hash: 'h1', size: 1, warning: null } },
    ]);
    expect(planUploads(fixture.state, fixture.repoId).plans).toEqual([]);
  });

  it('does not record a read over a file looked at again since it was planned', () => {
    local('flows/a', 'x', 'h1');
    local('flows/a', 'x', 'h2'); // the watcher saw a newer version meanwhile
    fixture.state.recordReads(fixture.repoId, [
      { flowPath: 'flows/a', path: 'x', expected: 'h1', read: { hash: 'h1', size: 1, warning: null } },
      { flowPath: 'flows/a', path: 'x', expected: 'h1', read: null },
    ]);
    expect(fixture.state.files(fixture.repoId)).toMatchObject([{ path: 'x', localHash: 'h2' }]);
  });
});

/**
 * Which deletions a plan carries (issue 45), row by row: a flow `flows/gen` whose files a, b and c the service
 * acknowledged and that are gone from disk, and d on disk changed; c in conflict in the rows that say so.
 */
describe("the planner's deletions: held, confirmed, in conflict", () => {
  const rows: {
    description: string;
    bases: boolean;
    holdDeletions: boolean;
    confirmed: string[];
    conflict: boolean;
    expected: { deletes: string[]; upserts: string[]; full: boolean } | null;
  }[] = [
    {
      description: 'nothing held, with bases: each deletion is an explicit path',
      bases: true,
      holdDeletions: false,
      confirmed: [],
      conflict: false,
      expected: { deletes: ['a', 'b', 'c'], upserts: ['d'], full: false },
    },
    {
      description: 'a file in conflict is left out of its flow: the others (and the change) go',
      bases: true,
      holdDeletions: false,
      confirmed: [],
      conflict: true,
      expected: { deletes: ['a', 'b'], upserts: ['d'], full: false },
    },
    {
      description: 'deletions held, none confirmed: the change goes, no deletion',
      bases: true,
      holdDeletions: true,
      confirmed: [],
      conflict: false,
      expected: { deletes: [], upserts: ['d'], full: false },
    },
    {
      description: 'deletions held, some confirmed (a set confirmed, then more held): the confirmed go',
      bases: true,
      holdDeletions: true,
      confirmed: ['a'],
      conflict: false,
      expected: { deletes: ['a'], upserts: ['d'], full: false },
    },
    {
      description:
        'confirmed deletions after a round refused for the conflict the service found: the others go, the conflict waits',
      bases: true,
      holdDeletions: true,
      confirmed: ['a', 'b', 'c'],
      conflict: true,
      expected: { deletes: ['a', 'b'], upserts: ['d'], full: false },
    },
    {
      description: 'without bases, every deletion of the flow confirmed: listed whole, they go',
      bases: false,
      holdDeletions: true,
      confirmed: ['a', 'b', 'c'],
      conflict: false,
      expected: { deletes: ['a', 'b', 'c'], upserts: ['d'], full: true },
    },
    {
      description:
        'without bases, one deletion of the flow not confirmed: not listed whole (it would delete it)',
      bases: false,
      holdDeletions: true,
      confirmed: ['a', 'b'],
      conflict: false,
      expected: { deletes: [], upserts: ['d'], full: false },
    },
  ];

  for (const row of rows)
    it(row.description, () => {
      const state = new SyncState(':memory:');
      try {
        const repoId = state.ensureRepo('/r', 'http://svc', 'acme', 'app');
        const flowPath = 'flows/gen';
        const files = ['a', 'b', 'c', 'd'].map((path) => ({
          flowPath,
          path,
          size: 1,
          mtimeMs: 1,
          localHash: 'h1',
          warning: null,
        }));
        state.saveLocal(repoId, files);
        state.acknowledge(repoId, [
          { flowPath, stored: files.map(({ path }) => ({ path, hash: 'h1', fileId: null })), dropped: [] },
        ]);
        state.saveLocal(repoId, [{ ...files[3]!, localHash: 'h2' }]);
        state.markGone(repoId, [
          { flowPath, path: 'a' },
          { flowPath, path: 'b' },
          { flowPath, path: 'c' },
        ]);
        if (row.conflict)
          state.recordConflicts(repoId, [
            {
              flowPath,
              path: 'c',
              baseHash: 'h1',
              serviceHash: 'h3',
              sentHash: null,
              writtenBy: null,
              writtenAt: null,
            },
          ]);
        const { plans } = planUploads(state, repoId, [flowPath], {
          bases: row.bases,
          holdDeletions: row.holdDeletions,
          confirmed: new Set(row.confirmed.map((path) => `${flowPath}\0${path}`)),
        });
        const plan = plans[0];
        expect(
          plan === undefined
            ? null
            : {
                deletes: plan.deletes.map((f) => f.path),
                upserts: plan.upserts.map((f) => f.path),
                full: plan.full,
              },
        ).toEqual(row.expected);
      } finally {
        state.close();
      }
    });
});
