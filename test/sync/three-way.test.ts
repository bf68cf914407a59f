import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { SyncState } from '../../src/sync/state.ts';
import {
  isDeletion,
  wantedOnService,
  wantedOnServiceSql,
  type OutboxSides,
} from '../../src/sync/three-way.ts';

/**
 * What a file of the outbox asks of the service, decided once (three-way.ts) and asked in SQL by the state (the
 * pending count, the held-deletion guard's count, the files "restore them on disk" puts back). Each row is a file
 * as the state can hold it; the predicate and the state's SQL must say the same of it (issue 36: they disagreed,
 * and a file grown over 1 MiB was a deletion to one and not to another).
 */
const A = 'a'.repeat(64);
const B = 'b'.repeat(64);

interface Row extends OutboxSides {
  name: string;
  wanted: string | null;
  deletion: boolean;
}

const ROWS: Row[] = [
  { name: 'in sync', localHash: A, warning: null, ackedHash: A, wanted: A, deletion: false },
  { name: 'edited here', localHash: B, warning: null, ackedHash: A, wanted: B, deletion: false },
  { name: 'new here', localHash: A, warning: null, ackedHash: null, wanted: A, deletion: false },
  {
    name: 'gone from disk, on the service',
    localHash: null,
    warning: null,
    ackedHash: A,
    wanted: null,
    deletion: true,
  },
  // The warned files: their hash is '' (not read: over 1 MiB, a link, a FIFO…) or the bytes' (binary).
  { name: 'grown over 1 MiB', localHash: '', warning: 'oversized', ackedHash: A, wanted: A, deletion: false },
  { name: 'become binary', localHash: B, warning: 'binary', ackedHash: A, wanted: A, deletion: false },
  { name: 'swapped for a link', localHash: '', warning: 'symlink', ackedHash: A, wanted: A, deletion: false },
  { name: 'swapped for a FIFO', localHash: '', warning: 'special', ackedHash: A, wanted: A, deletion: false },
  { name: 'given a hard link', localHash: '', warning: 'hardlink', ackedHash: A, wanted: A, deletion: false },
  { name: 'unreadable now', localHash: A, warning: 'unreadable', ackedHash: A, wanted: A, deletion: false },
  {
    name: 'unreadable, never read',
    localHash: '',
    warning: 'unreadable',
    ackedHash: A,
    wanted: A,
    deletion: false,
  },
  {
    name: 'over 1 MiB, never sent',
    localHash: '',
    warning: 'oversized',
    ackedHash: null,
    wanted: null,
    deletion: false,
  },
  {
    name: 'binary, never sent',
    localHash: B,
    warning: 'binary',
    ackedHash: null,
    wanted: null,
    deletion: false,
  },
];

describe('wantedOnService and isDeletion', () => {
  it.each(ROWS)('$name', (row) => {
    expect(wantedOnService(row)).toBe(row.wanted);
    expect(isDeletion(row)).toBe(row.deletion);
  });
});

describe("the state's SQL says what the predicate says", () => {
  let state: SyncState;
  let repoId: number;

  beforeEach(() => {
    state = new SyncState(':memory:');
    repoId = state.ensureRepo('/repo', 'embedded', 'acme', 'app');
    const insert = state.db.prepare(
      `INSERT INTO files (repo_id, flow_path, path, size, mtime_ms, local_hash, warning, acked_hash)
       VALUES (?, 'flows/a', ?, 1, 1, ?, ?, ?)`,
    );
    for (const row of ROWS) insert.run(repoId, row.name, row.localHash, row.warning, row.ackedHash);
  });
  afterEach(() => state.close());

  it('what should be on the service, row by row', () => {
    const wanted = state.db
      .prepare(`SELECT path, ${wantedOnServiceSql()} AS wanted FROM files WHERE repo_id = ?`)
      .all(repoId) as { path: string; wanted: string | null }[];
    expect(Object.fromEntries(wanted.map((w) => [w.path, w.wanted]))).toEqual(
      Object.fromEntries(ROWS.map((row) => [row.name, wantedOnService(row)])),
    );
  });

  it('pending: what should be on the service is not what is', () => {
    const pending = state
      .fileStates(repoId)
      .filter((file) => file.pending)
      .map((file) => file.path);
    expect(pending.sort()).toEqual(
      ROWS.filter((row) => wantedOnService(row) !== row.ackedHash)
        .map((row) => row.name)
        .sort(),
    );
  });

  it("the held-deletion guard's count and the files restored on disk are the deletions", () => {
    const deletions = ROWS.filter(isDeletion).map((row) => row.name);
    expect(state.deletionCount(repoId)).toBe(deletions.length);
    expect(state.goneAcknowledged(repoId).map((file) => file.path)).toEqual(deletions.sort());
  });

  it('a file in conflict is no deletion of a round: its user settles it', () => {
    state.recordConflicts(repoId, [
      {
        flowPath: 'flows/a',
        path: 'gone from disk, on the service',
        baseHash: A,
        serviceHash: B,
        sentHash: null,
        writtenBy: null,
        writtenAt: null,
      },
    ]);
    expect(state.deletionCount(repoId)).toBe(0);
    expect(state.goneAcknowledged(repoId)).toEqual([]);
  });
});
