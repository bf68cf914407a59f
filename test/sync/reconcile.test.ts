import { describe, expect, it } from 'vitest';
import {
  changedSince,
  flowsToCompare,
  isOwnVersion,
  reconcileFlow,
  writerSeen,
  writerShown,
  type FlowFacts,
  type KnownFile,
  type ServiceFile,
} from '../../src/sync/reconcile.ts';

/*
 * What happens when the service differs from what this checkout knows of a flow (reconcile.ts), row by row in the
 * manner of Mutagen's reconcile_test.go: each row is one file's three sides (base, disk, service) and who wrote the
 * service's version, and the plan it must give. `ME` is this checkout's writer id, `ADA` a teammate's.
 */
const A = 'a'.repeat(64);
const B = 'b'.repeat(64);
const C = 'c'.repeat(64);
const ME = 'me-checkout-id';
const ADA = 'ada-checkout-id';

interface Row {
  name: string;
  /** This checkout's file (undefined: the state has no row of it). */
  file?: Omit<KnownFile, 'path'>;
  /** The service's current version (undefined: none). */
  service?: { hash: string; by: string | null };
  wentBack?: boolean;
  /** The plan for the file: what is recorded (and how it reads), adopted, counted as not here, or nothing. */
  plan:
    | { record: { serviceHash: string | null; lost?: boolean } }
    | { adopt: { hash: string; why: 'own' | 'same as disk' } }
    | { notInCheckout: true }
    | 'nothing';
}

const ROWS: Row[] = [
  {
    name: 'in sync: the service holds the base, the disk is the base',
    file: { base: A, disk: A },
    service: { hash: A, by: ADA },
    plan: 'nothing',
  },
  {
    name: 'yours to send: edited here, the service holds the base (the round sends it)',
    file: { base: A, disk: B },
    service: { hash: A, by: ME },
    plan: 'nothing',
  },
  {
    name: "behind: a teammate's edit of a file untouched here",
    file: { base: A, disk: A },
    service: { hash: B, by: ADA },
    plan: { record: { serviceHash: B } },
  },
  {
    name: 'conflict: edited on both sides, differently',
    file: { base: A, disk: C },
    service: { hash: B, by: ADA },
    plan: { record: { serviceHash: B } },
  },
  {
    name: "deleted there: a teammate's deletion of a file untouched here",
    file: { base: A, disk: A },
    plan: { record: { serviceHash: null } },
  },
  {
    name: 'deleted there, edited here: a conflict (never a silent re-create nor a silent loss)',
    file: { base: A, disk: B },
    plan: { record: { serviceHash: null } },
  },
  {
    name: "a git pull made the disk the service's: adopted as the base, nothing to record",
    file: { base: A, disk: B },
    service: { hash: B, by: ADA },
    plan: { adopt: { hash: B, why: 'same as disk' } },
  },
  {
    name: 'both made the same edit: the same bytes, adopted',
    file: { base: A, disk: B },
    service: { hash: B, by: ME },
    plan: { adopt: { hash: B, why: 'same as disk' } },
  },
  {
    name: 'own version sent without an answer (the bytes it sent): adopted, the edit made since goes on it',
    file: { base: A, disk: C, sent: B },
    service: { hash: B, by: ME },
    plan: { adopt: { hash: B, why: 'own' } },
  },

  {
    name: 'its flow in flight with other bytes sent: a copy of this checkout (same id) wrote it, a conflict (the model)',
    file: { base: A, disk: C, sent: C },
    service: { hash: B, by: ME },
    plan: { record: { serviceHash: B } },
  },
  {
    name: 'a deletion sent without an answer, the file re-created under its id by a copy of it: not its own (the model)',
    file: { base: A, disk: null, sent: null },
    service: { hash: B, by: ME },
    plan: { record: { serviceHash: B } },
  },
  {
    name: 'its id alone, no acknowledgement lost, other bytes: a conflict of two versions, asked, never sent over',
    file: { base: A, disk: C },
    service: { hash: B, by: ME },
    plan: { record: { serviceHash: B } },
  },
  {
    name: "a teammate's version is never own, whatever was lost",
    file: { base: A, disk: C, sent: B },
    service: { hash: B, by: ADA },
    plan: { record: { serviceHash: B } },
  },
  {
    name: 'a version with no writer named is never own',
    file: { base: A, disk: C, sent: B },
    service: { hash: B, by: null },
    plan: { record: { serviceHash: B } },
  },
  {
    name: 'went back in time to a version under its own id: lost (a copy of it may have written it since), asked',
    file: { base: A, disk: A },
    service: { hash: B, by: ME },
    wentBack: true,
    plan: { record: { serviceHash: B, lost: true } },
  },
  {
    name: "went back in time to a teammate's older version: lost, a conflict whose way out is sending this one",
    file: { base: A, disk: A },
    service: { hash: B, by: ADA },
    wentBack: true,
    plan: { record: { serviceHash: B, lost: true } },
  },
  {
    name: 'went back in time, file gone there: lost, the only copy is here',
    file: { base: A, disk: A },
    wentBack: true,
    plan: { record: { serviceHash: null, lost: true } },
  },
  {
    name: 'went back in time to the very bytes on disk: nothing differs',
    file: { base: A, disk: B },
    service: { hash: B, by: ADA },
    wentBack: true,
    plan: { adopt: { hash: B, why: 'same as disk' } },
  },
  {
    name: 'new here, the same bytes there (a lost first acknowledgement): adopted',
    file: { base: null, disk: A },
    service: { hash: A, by: ADA },
    plan: { adopt: { hash: A, why: 'same as disk' } },
  },
  {
    name: 'new here, other bytes there, on no base (an old clone, an edit while the state was lost): a conflict now',
    file: { base: null, disk: A },
    service: { hash: B, by: ADA },
    plan: { record: { serviceHash: B } },
  },
  {
    name: 'sent, then deleted here before the answer: own, adopted, so the deletion goes on it',
    file: { base: null, disk: null, sent: A },
    service: { hash: A, by: ME },
    plan: { adopt: { hash: A, why: 'own' } },
  },
  {
    name: 'on the service, never here (no row): not in this checkout',
    service: { hash: A, by: ADA },
    plan: { notInCheckout: true },
  },
  {
    name: 'on the service, a forgotten row here (no base, not on disk): not in this checkout',
    file: { base: null, disk: null },
    service: { hash: A, by: ADA },
    plan: { notInCheckout: true },
  },
  {
    name: 'deleted here, on the service at its base: a deletion to send, not "not in this checkout"',
    file: { base: A, disk: null },
    service: { hash: A, by: ADA },
    plan: 'nothing',
  },
  { name: 'new here only: the round sends it', file: { base: null, disk: A }, plan: 'nothing' },
];

function factsOf(row: Row): FlowFacts {
  const listed: ServiceFile[] = row.service
    ? [
        {
          path: 'a.yml',
          hash: row.service.hash,
          writtenBy: row.service.by,
          writtenAt: '2026-11-27T10:00:00Z',
        },
      ]
    : [];
  return {
    flowPath: 'flows/ci',
    files: row.file ? [{ path: 'a.yml', ...row.file }] : [],
    listed,
    ...(row.wentBack ? { wentBack: true } : {}),
    me: { writer: ME },
  };
}

describe('reconcileFlow: one file against the service, each row described', () => {
  it.each(ROWS)('$name', (row) => {
    const plan = reconcileFlow(factsOf(row));
    const said =
      plan.record.length > 0
        ? {
            record: {
              serviceHash: plan.record[0]!.serviceHash,
              ...(plan.record[0]!.lost ? { lost: true } : {}),
            },
          }
        : plan.adopt.length > 0
          ? { adopt: { hash: plan.adopt[0]!.hash, why: plan.adopt[0]!.why } }
          : plan.notInCheckout.length > 0
            ? { notInCheckout: true }
            : 'nothing';
    expect(said).toEqual(row.plan);
    // One answer per file: never recorded and adopted, nor listed as not here while known.
    expect(plan.record.length + plan.adopt.length + plan.notInCheckout.length).toBeLessThanOrEqual(1);
  });

  it('a difference carries what is on disk, the base and who wrote the service version, for its user', () => {
    const plan = reconcileFlow(factsOf(ROWS[3]!));
    expect(plan.record[0]).toEqual({
      flowPath: 'flows/ci',
      path: 'a.yml',
      baseHash: A,
      serviceHash: B,
      sentHash: C,
      writtenBy: ADA,
      writtenAt: '2026-11-27T10:00:00Z',
    });
  });
});

describe('reconcileFlow: what a teammate revert clears', () => {
  const base = { flowPath: 'flows/ci', me: { writer: ME } };
  it.each([
    {
      name: 'the service holds the base again: the recorded difference is cleared at it',
      listed: [{ path: 'a.yml', hash: A, writtenBy: ADA, writtenAt: null }],
      cleared: [{ path: 'a.yml', hash: A }],
    },
    {
      name: 'the service still holds another version: nothing cleared, recorded again',
      listed: [{ path: 'a.yml', hash: B, writtenBy: ADA, writtenAt: null }],
      cleared: [],
    },
    { name: 'the file is gone there: nothing cleared', listed: [], cleared: [] },
  ])('$name', ({ listed, cleared }) => {
    const plan = reconcileFlow({
      ...base,
      files: [{ path: 'a.yml', base: A, disk: A }],
      listed,
      recorded: [{ path: 'a.yml', base: A }],
    });
    expect(plan.cleared).toEqual(cleared);
  });

  it('a difference recorded on an older base (this checkout synced since) is not cleared by the plan', () => {
    const plan = reconcileFlow({
      ...base,
      files: [{ path: 'a.yml', base: B, disk: B }],
      listed: [{ path: 'a.yml', hash: A, writtenBy: ADA, writtenAt: null }],
      recorded: [{ path: 'a.yml', base: A }],
    });
    expect(plan.cleared).toEqual([]);
  });
});

describe('isOwnVersion: the writer id and the bytes, never the label alone', () => {
  it.each([
    { name: 'its id, the bytes on disk', by: ME, disk: B, own: true },
    { name: 'its id, the very bytes it sent without an answer', by: ME, disk: C, sent: B, own: true },
    { name: 'its id, other bytes sent without an answer', by: ME, disk: C, sent: A, own: false },
    {
      name: 'its id alone (a checkout copied with its state, or a rebuilt state): not proof',
      by: ME,
      disk: C,
      own: false,
    },
    { name: "a teammate's id, whatever was sent", by: ADA, disk: C, sent: B, own: false },
    { name: 'no writer named, whatever was sent', by: null, disk: C, sent: B, own: false },
  ])('$name', ({ by, disk, sent, own }: { by: string | null; disk: string; sent?: string; own: boolean }) => {
    expect(
      isOwnVersion(
        { hash: B, writtenBy: by },
        {
          path: 'a.yml',
          base: A,
          disk,
          ...(sent === undefined ? {} : { sent }),
        },
        { writer: ME },
      ),
    ).toBe(own);
  });

  it('a checkout with no id owns nothing', () => {
    expect(isOwnVersion({ hash: B, writtenBy: null }, { path: 'a.yml', base: A, disk: B }, {})).toBe(false);
  });
});

describe('flowsToCompare: which flows a look lists file by file', () => {
  const acknowledged = new Map([
    ['flows/a', 'h1'],
    ['flows/b', 'h2'],
  ]);
  it.each([
    {
      name: 'a full look compares every flow here or there; lists those whose aggregate differs',
      listed: new Map([
        ['flows/a', 'h1'],
        ['flows/b', 'h9'],
        ['flows/c', 'h3'],
      ]),
      last: null,
      changed: ['flows/a', 'flows/b', 'flows/c'],
      differing: ['flows/b', 'flows/c'],
    },
    {
      name: 'a quick look compares only what moved on the service since the last look',
      listed: new Map([
        ['flows/a', 'h1'],
        ['flows/b', 'h9'],
      ]),
      last: new Map([
        ['flows/a', 'h1'],
        ['flows/b', 'h2'],
      ]),
      changed: ['flows/b'],
      differing: ['flows/b'],
    },
    {
      name: 'a flow emptied on the service is compared (its files deleted there)',
      listed: new Map<string, string | null>([
        ['flows/a', null],
        ['flows/b', 'h2'],
      ]),
      last: new Map([
        ['flows/a', 'h1'],
        ['flows/b', 'h2'],
      ]),
      changed: ['flows/a'],
      differing: ['flows/a'],
    },
  ])('$name', ({ listed, last, changed, differing }) => {
    const scope = flowsToCompare({ listed, last, acknowledged, leftForTheirRound: () => false });
    expect(scope.changed.sort()).toEqual(changed);
    expect([...scope.differing].sort()).toEqual(differing);
  });

  it('flows left for their round (sent without an answer, a held root) are not compared', () => {
    const scope = flowsToCompare({
      listed: new Map([['flows/b', 'h9']]),
      last: null,
      acknowledged,
      leftForTheirRound: (flowPath) => flowPath === 'flows/b',
    });
    expect(scope.changed.sort()).toEqual(['flows/a']);
    expect([...scope.differing]).toEqual(['flows/a']);
  });

  it('changedSince: a flow new, gone or moved on the service', () => {
    expect(
      changedSince(
        new Map([
          ['x', 'h1'],
          ['y', 'h2'],
        ]),
        new Map([
          ['y', 'h0'],
          ['z', 'h3'],
        ]),
      ).sort(),
    ).toEqual(['x', 'y', 'z']);
  });
});

describe('own versions by the member the service recorded (issue 48), each row described', () => {
  const alice = { id: 'm_alice', name: 'alice', shared: false, removed: false };
  const bob = { id: 'm_bob', name: 'bob', shared: false, removed: false };
  const shared = { id: 'm_shared', name: 'shared', shared: true, removed: false };
  // The bytes it sent without an answer are on the service under its label: evidence, if its member wrote them.
  const file: KnownFile = { path: 'a.yml', base: A, disk: C, sent: B };
  const rows: {
    name: string;
    member?: typeof alice | null;
    memberId: string | null;
    own: boolean;
    shown: string;
  }[] = [
    {
      name: 'its own member under its label: its own lost acknowledgement, adopted',
      member: alice,
      memberId: 'm_alice',
      own: true,
      shown: `alice · ${ME}`,
    },
    {
      name: "another member under its exact label (a forged label): bob's version, a conflict by bob",
      member: bob,
      memberId: 'm_alice',
      own: false,
      shown: `bob · ${ME}`,
    },
    {
      name: 'a service without members: the label alone, as before',
      memberId: null,
      own: true,
      shown: ME,
    },
    {
      name: 'a row from before members: the label alone, shown as it was',
      member: null,
      memberId: 'm_alice',
      own: true,
      shown: ME,
    },
    {
      name: 'the shared token names nobody: the label alone, shown as it was',
      member: shared,
      memberId: 'm_shared',
      own: true,
      shown: ME,
    },
  ];
  it.each(rows)('$name', ({ member, memberId, own, shown }) => {
    const version = { hash: B, writtenBy: ME, ...(member === undefined ? {} : { member }) };
    expect(isOwnVersion(version, file, { writer: ME, memberId })).toBe(own);
    expect(writerShown(version)).toBe(shown);
    const plan = reconcileFlow({
      flowPath: 'flows/ci',
      files: [file],
      listed: [{ path: 'a.yml', writtenAt: null, ...version }],
      me: { writer: ME, memberId },
    });
    if (own) expect(plan.adopt).toEqual([{ path: 'a.yml', hash: B, why: 'own' }]);
    else expect(plan.record.map((difference) => difference.writtenBy)).toEqual([shown]);
  });

  it("a listing names another member's version under this label as another writer (git's motions then held)", () => {
    const me = { writer: ME, memberId: 'm_alice' };
    expect(writerSeen({ writtenBy: ME, member: bob }, me)).toBe(`bob · ${ME}`);
    expect(writerSeen({ writtenBy: ME, member: alice }, me)).toBe(ME);
    expect(writerSeen({ writtenBy: ADA, member: alice }, me)).toBe(`alice · ${ADA}`);
  });
});
