import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { SyncState } from '../../src/sync/state.ts';
import {
  fileSide,
  isDeletion,
  wantedOnService,
  wantedOnServiceSql,
  wentBackInTime,
  type FileSide,
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

/**
 * Where a file stands between the disk, its base and the service (issue 41): behind is not a conflict, and a file
 * whose disk is the service's is in sync whatever its base (a git pull settles a conflict). The state's lists and
 * counts ask FILE_SIDE_SQL; each row is asked of both.
 */
const C = 'c'.repeat(64);
interface SideRow {
  name: string;
  localHash: string | null;
  warning: string | null;
  ackedHash: string | null;
  serviceHash: string | null;
  side: FileSide;
}
const SIDE_ROWS: SideRow[] = [
  { name: 'all three equal', localHash: A, warning: null, ackedHash: A, serviceHash: A, side: 'in sync' },
  {
    name: 'edited here only',
    localHash: B,
    warning: null,
    ackedHash: A,
    serviceHash: A,
    side: 'yours to send',
  },
  {
    name: 'edited by a teammate only',
    localHash: A,
    warning: null,
    ackedHash: A,
    serviceHash: B,
    side: 'behind',
  },
  {
    name: 'deleted on the service only',
    localHash: A,
    warning: null,
    ackedHash: A,
    serviceHash: null,
    side: 'behind',
  },
  {
    name: 'new on the service',
    localHash: null,
    warning: null,
    ackedHash: null,
    serviceHash: B,
    side: 'behind',
  },
  {
    name: 'edited on both sides',
    localHash: C,
    warning: null,
    ackedHash: A,
    serviceHash: B,
    side: 'conflict',
  },
  {
    name: 'deleted here, edited there',
    localHash: null,
    warning: null,
    ackedHash: A,
    serviceHash: B,
    side: 'conflict',
  },
  {
    name: 'pulled: disk is the service',
    localHash: B,
    warning: null,
    ackedHash: A,
    serviceHash: B,
    side: 'in sync',
  },
  {
    name: 'deleted on both sides',
    localHash: null,
    warning: null,
    ackedHash: A,
    serviceHash: null,
    side: 'in sync',
  },
  // Grown over 1 MiB here (not read, not sent): changed here too, so a conflict, never "untouched here".
  {
    name: 'not sent here, edited there',
    localHash: '',
    warning: 'oversized',
    ackedHash: A,
    serviceHash: B,
    side: 'conflict',
  },
  {
    name: 'unreadable now, edited there',
    localHash: A,
    warning: 'unreadable',
    ackedHash: A,
    serviceHash: B,
    side: 'behind',
  },
];

describe('fileSide, and the state that asks it in SQL', () => {
  it.each(SIDE_ROWS)('$name: $side', (row) => {
    expect(fileSide({ disk: row.localHash, base: row.ackedHash, service: row.serviceHash })).toBe(row.side);
  });

  it("the state's conflicts and behind lists and counts say what fileSide says", () => {
    const state = new SyncState(':memory:');
    try {
      const repoId = state.ensureRepo('/repo', 'embedded', 'acme', 'app');
      const insert = state.db.prepare(
        `INSERT INTO files (repo_id, flow_path, path, size, mtime_ms, local_hash, warning, acked_hash)
         VALUES (?, 'flows/a', ?, 1, 1, ?, ?, ?)`,
      );
      for (const row of SIDE_ROWS)
        if (row.localHash !== null || row.ackedHash !== null)
          insert.run(repoId, row.name, row.localHash, row.warning, row.ackedHash);
      state.recordConflicts(
        repoId,
        SIDE_ROWS.map((row) => ({
          flowPath: 'flows/a',
          path: row.name,
          baseHash: row.ackedHash,
          serviceHash: row.serviceHash,
          sentHash: row.localHash,
          writtenBy: 'bob@laptop:~/app',
          writtenAt: null,
        })),
      );
      const named = (side: FileSide) =>
        SIDE_ROWS.filter((row) => row.side === side)
          .map((row) => row.name)
          .sort();
      expect(state.conflicts(repoId).map((c) => c.path)).toEqual(named('conflict'));
      expect(state.behind(repoId).map((c) => c.path)).toEqual(named('behind'));
      expect(state.conflictCount(repoId)).toBe(named('conflict').length);
      expect(state.counts(repoId)).toMatchObject({
        conflicts: named('conflict').length,
        behind: named('behind').length,
      });
      const files = state.fileStates(repoId);
      expect(files.filter((f) => f.conflict).map((f) => f.path)).toEqual(named('conflict'));
      expect(files.filter((f) => f.behind).map((f) => f.path)).toEqual(
        named('behind').filter((name) => files.some((f) => f.path === name)),
      );
      // What stopped being a conflict or behind (in sync, or only changed here) is settled at the next round.
      expect(
        state
          .settleConflictsMatchingDisk(repoId)
          .map((f) => f.path)
          .sort(),
      ).toEqual([...named('in sync'), ...named('yours to send')].sort());
    } finally {
      state.close();
    }
  });
});

describe('wentBackInTime: a teammate writes on top of the base; a service restored from a backup lost it', () => {
  it.each([
    { name: "a teammate's edit", base: A, service: B, versions: [B, A], back: false },
    { name: "a teammate's deletion", base: A, service: null, versions: [null, A], back: false },
    { name: 'a new file on the service', base: null, service: B, versions: [B], back: false },
    { name: 'an older backup: the base never reached it', base: B, service: A, versions: [A], back: true },
    { name: 'a wiped database: no trace of the file', base: A, service: null, versions: [], back: true },
    { name: 'files lost, their history kept', base: A, service: null, versions: [A], back: true },
    // The team model's first catch (issue 45, failure 1): a teammate's take-theirs kept a conflict copy, the newest
    // version; read as the file's line it said the service went back in time, to every other checkout.
    {
      name: "a teammate's conflict copy is newest",
      base: A,
      service: B,
      versions: ['copy', B, A],
      back: false,
    },
    {
      name: 'a copy of the base alone is no history of it',
      base: A,
      service: B,
      versions: ['copy:A', B],
      back: true,
    },
  ])('$name', ({ base, service, versions, back }) => {
    const history = versions.map((v) =>
      v === 'copy' ? { hash: C, copy: true } : v === 'copy:A' ? { hash: A, copy: true } : { hash: v },
    );
    expect(wentBackInTime([{ base, service, versions: history }])).toBe(back);
  });

  it('a lost base is a conflict, never "behind" (taking the service\'s would age or delete the only copy)', () => {
    expect(fileSide({ disk: A, base: A, service: null, lost: true })).toBe('conflict');
    // Deleted on the service before this checkout's first round, still on its disk: re-creating it is a conflict
    // (issue 41; raising a conflict in one more case was this row and one line of fileSide and its SQL).
    expect(fileSide({ disk: A, base: null, service: null, raised: true })).toBe('conflict');
    // Restored here while the service holds a newer version: the disk is the base, yet its user chose it.
    expect(fileSide({ disk: A, base: A, service: B, raised: true })).toBe('conflict');
    expect(fileSide({ disk: B, base: A, service: B, raised: true })).toBe('in sync');
    expect(fileSide({ disk: A, base: null, service: null })).toBe('yours to send');
    expect(fileSide({ disk: A, base: A, service: C, lost: true })).toBe('conflict');
    expect(fileSide({ disk: C, base: A, service: C, lost: true })).toBe('in sync');
  });
});
