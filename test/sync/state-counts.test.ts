import Database from 'better-sqlite3';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { SyncState } from '../../src/sync/index.ts';
import { memoryStateEachTest } from '../support/memory-state.ts';

/**
 * The state's counts are one pass over the files (issue 50: `flowsync status` and every engine status read them at
 * 100,000 files). Their `pendingFlows` must stay the number of flows a round would send (`pendingFlows()`: those
 * with a pending file, and those sent without an answer), whatever mix of the two the state holds.
 */
describe('counts.pendingFlows is the number of flows pendingFlows() lists', () => {
  const fixture = memoryStateEachTest();
  const { local, ack } = fixture;
  const sending = (...flowPaths: string[]) =>
    fixture.state.markSending(
      fixture.repoId,
      flowPaths.map((flowPath) => ({ flowPath })),
    );
  const conflict = (flowPath: string, path: string) =>
    fixture.state.recordConflicts(fixture.repoId, [
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
      expect(fixture.state.pendingFlows(fixture.repoId).sort()).toEqual(row.flows);
      expect(fixture.state.counts(fixture.repoId).pendingFlows).toBe(row.flows.length);
    });
});

/**
 * The counts an agent keeps when it closes the state (issue 50: counting 100,000 files was most of a `status`),
 * and when a reader may use them: only while no agent has the state open since.
 */
describe('the counts kept in the state', () => {
  let dir: string;
  let path: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'flowsync-counts-'));
    path = join(dir, 'state.db');
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  const agentWrites = (files: string[]) => {
    const state = new SyncState(path);
    const repoId = state.ensureRepo('/r', 'http://svc', 'acme', 'app');
    state.saveLocal(
      repoId,
      files.map((path) => ({
        flowPath: 'flows/a',
        path,
        size: 1,
        mtimeMs: 1,
        localHash: 'h',
        warning: null,
      })),
    );
    return { state, repoId };
  };
  const read = () => {
    const reader = new SyncState(path, { reader: true });
    try {
      return reader.counts(reader.repos()[0]!.id);
    } finally {
      reader.close();
    }
  };
  /** What a reader would show if it used kept counts: a tampered copy of them, told apart from counted ones. */
  const tamperKept = () => {
    const db = new Database(path);
    db.prepare(`UPDATE repos SET counts = json_set(counts, '$.files', 99) WHERE counts IS NOT NULL`).run();
    db.close();
  };

  it('are those of the agent that closed it last, used by a reader without counting', () => {
    agentWrites(['x', 'y']).state.close();
    expect(read()).toMatchObject({ files: 2, pending: 2, flows: 1 });
    tamperKept();
    expect(read().files).toBe(99);
  });

  it('are forgotten when an agent opens the state: a reader counts while it runs, and after it died', () => {
    agentWrites(['x', 'y']).state.close();
    tamperKept();
    const running = agentWrites(['z']);
    expect(read().files).toBe(3);
    // The agent dies without closing: nothing kept, the reader still counts.
    running.state.db.close();
    expect(read().files).toBe(3);
  });

  it('are used by the next agent until it changes a file; its own bookkeeping of the repository changes none', () => {
    agentWrites(['x', 'y']).state.close();
    tamperKept();
    const next = new SyncState(path);
    const repoId = next.ensureRepo('/r', 'http://svc', 'acme', 'app');
    next.recordSyncResult(repoId, null);
    next.rememberServiceTakesBases(repoId);
    next.claimSource('http://svc', 'acme', 'app', '/r');
    expect(next.counts(repoId).files).toBe(99);
    next.saveLocal(repoId, [
      { flowPath: 'flows/a', path: 'z', size: 1, mtimeMs: 1, localHash: 'h', warning: null },
    ]);
    expect(next.counts(repoId).files).toBe(3);
    next.close();
  });

  it('are never written by a reader', () => {
    const running = agentWrites(['x']);
    expect(read().files).toBe(1);
    running.state.saveLocal(running.repoId, [
      { flowPath: 'flows/a', path: 'y', size: 1, mtimeMs: 1, localHash: 'h', warning: null },
    ]);
    expect(read().files).toBe(2);
    running.state.close();
  });
});
