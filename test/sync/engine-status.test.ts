import { describe, expect, it } from 'vitest';
import type { StorageFault } from '../../src/host/index.ts';
import {
  afterRound,
  backToResting,
  composeStatus,
  initialFacts,
  readOnlyLine,
  restingOutcome,
  withPaused,
  withPhase,
  withSent,
  type StatusFacts,
} from '../../src/sync/engine-status.ts';
import type { RoundOutcome } from '../../src/sync/scheduler.ts';

/**
 * What the engine's status says (issue 39): each row a sequence of events the engine meets, described, and the
 * facts it leaves. The storage-fault rows are the bugs of the three engine commits before the split (a fault lost
 * between two phase changes): here they are a line each.
 */
const FULL: StorageFault = 'full';
const idle = initialFacts(false);
const storageRound: RoundOutcome = { kind: 'refused', phase: 'storage', message: 'disk full', fault: FULL };
const offlineRound = { kind: 'unreachable', phase: 'offline', message: 'no answer' } as RoundOutcome;

type Step = (facts: StatusFacts) => StatusFacts;
const phase =
  (p: Parameters<typeof withPhase>[1], message: string | null = null, fault?: StorageFault): Step =>
  (facts) =>
    withPhase(facts, p, message, fault);
const round =
  (outcome: RoundOutcome, paused = false): Step =>
  (facts) =>
    afterRound(facts, outcome, paused).facts;

const rows: { description: string; start?: StatusFacts; steps: Step[]; expected: Partial<StatusFacts> }[] = [
  {
    description: 'a fresh engine is idle, no fault, no outage',
    steps: [],
    expected: { phase: 'idle', fault: null },
  },
  {
    description: 'a paused engine starts paused and rests paused',
    start: initialFacts(true),
    steps: [],
    expected: { phase: 'paused', resting: { phase: 'paused', message: null } },
  },
  {
    description: 'a state write refused: storage, with its fault, and an outage begins',
    steps: [round(storageRound)],
    expected: { phase: 'storage', fault: FULL, outage: { files: 0 } },
  },
  {
    description: 'storage fault kept through a scan (the retry scans first: commit a9e98fa)',
    steps: [round(storageRound), phase('scanning')],
    expected: { phase: 'scanning', fault: FULL },
  },
  {
    description:
      'storage fault kept when the scan ends while the retry waits (back to resting, with its fault)',
    steps: [round(storageRound), phase('scanning'), backToResting],
    expected: { phase: 'storage', message: 'disk full', fault: FULL },
  },
  {
    description: "storage fault set with the 'storage' phase, never before it (commit a17e50c)",
    steps: [phase('syncing'), phase('storage', 'disk full', FULL)],
    expected: { phase: 'storage', fault: FULL },
  },
  {
    description: 'the fault ends with any other phase (a round that went through)',
    steps: [round(storageRound), phase('syncing')],
    expected: { phase: 'syncing', fault: null },
  },
  {
    description: 'offline, then a round that goes through: idle, the outage ends',
    steps: [round(offlineRound), round({ kind: 'done' })],
    expected: { phase: 'idle', outage: null, resting: { phase: 'idle', message: null } },
  },
  {
    description: 'files sent during an outage are counted for "back in sync"',
    steps: [round(offlineRound), (f) => withSent(f, 3), (f) => withSent(f, 2)],
    expected: { outage: { files: 5 } },
  },
  {
    description: 'files sent with no outage are not counted',
    steps: [(f) => withSent(f, 3)],
    expected: { outage: null },
  },
  {
    description: 'a round while the folder is missing leaves it missing',
    steps: [phase('missing', 'gone'), round({ kind: 'done' })],
    expected: { phase: 'missing', message: 'gone' },
  },
  {
    description: 'a round while paused rests paused',
    steps: [round({ kind: 'done' }, true)],
    expected: { phase: 'paused', resting: { phase: 'paused', message: null } },
  },
  {
    description: 'pause while missing keeps missing (it rests paused)',
    steps: [phase('missing', 'gone'), (f) => withPaused(f, true)],
    expected: { phase: 'missing', resting: { phase: 'paused', message: null } },
  },
  {
    description: 'resume from paused: idle',
    start: initialFacts(true),
    steps: [(f) => withPaused(f, false)],
    expected: { phase: 'idle', resting: { phase: 'idle', message: null } },
  },
  {
    description: 'a scan that ends with no retry waiting stays as it is (backToResting only from scanning)',
    steps: [phase('syncing'), backToResting],
    expected: { phase: 'syncing' },
  },
];

describe('the engine status facts', () => {
  for (const row of rows)
    it(row.description, () => {
      const facts = row.steps.reduce((current, step) => step(current), row.start ?? idle);
      expect(facts).toMatchObject(row.expected);
    });

  it('says "back in sync" once, with the files sent since the outage began', () => {
    const during = withSent(round(offlineRound)(idle), 4);
    expect(afterRound(during, { kind: 'done' }, false).recovered).toEqual({ files: 4 });
    expect(afterRound(idle, { kind: 'done' }, false).recovered).toBeNull();
  });
});

describe('composeStatus', () => {
  const known = { held: [] as string[], folder: '/data', pending: () => 3, standing: () => [] as string[] };
  const cases: {
    description: string;
    facts: StatusFacts;
    known?: Partial<typeof known>;
    expected: object;
  }[] = [
    {
      description: 'idle with nothing standing: no message',
      facts: idle,
      expected: { phase: 'idle', message: null },
    },
    {
      description: 'a held flow root makes an idle repository missing, with why',
      facts: idle,
      known: { held: ['flows is empty'] },
      expected: { phase: 'missing', message: 'flows is empty' },
    },
    {
      description: 'a held root does not hide an outage',
      facts: withPhase(idle, 'offline', 'no answer'),
      known: { held: ['flows is empty'] },
      expected: { phase: 'offline', message: 'no answer' },
    },
    {
      description: 'what stays wrong is said when nothing more urgent is',
      facts: idle,
      known: { standing: () => ['1 file in conflict'] },
      expected: { phase: 'idle', message: '1 file in conflict' },
    },
  ];
  for (const row of cases)
    it(row.description, () => {
      expect(composeStatus(row.facts, { ...known, ...row.known })).toEqual(row.expected);
    });

  it('a storage fault says what waits, with the count of changes', () => {
    const shown = composeStatus(round(storageRound)(idle), known);
    expect(shown.phase).toBe('storage');
    expect(shown.message).toMatch(/3 changes waiting/);
  });
});

describe('restingOutcome: how a round that sent all it could ends', () => {
  const rows: {
    description: string;
    due: { retryInMs: number | null; waitingMs: number; unreadable: boolean };
    expected: RoundOutcome;
  }[] = [
    {
      description: 'nothing waits: settled, the next round when a change asks',
      due: { retryInMs: null, waitingMs: 0, unreadable: false },
      expected: { kind: 'done' },
    },
    {
      description: 'a file could not be read: looked at again on the back-off',
      due: { retryInMs: null, waitingMs: 0, unreadable: true },
      expected: { kind: 'recheck' },
    },
    {
      description: 'a flow waits out its own back-off: the next look when it is due',
      due: { retryInMs: 4000, waitingMs: 0, unreadable: false },
      expected: { kind: 'recheck', afterMs: 4000 },
    },
    {
      description: 'deletions settle: the next look when they have',
      due: { retryInMs: null, waitingMs: 1500, unreadable: true },
      expected: { kind: 'recheck', afterMs: 1500 },
    },
    {
      description: 'both: the first that is due',
      due: { retryInMs: 900, waitingMs: 1500, unreadable: false },
      expected: { kind: 'recheck', afterMs: 900 },
    },
  ];
  for (const row of rows)
    it(row.description, () => {
      expect(restingOutcome(row.due)).toEqual(row.expected);
    });
});

describe("readOnlyLine: a read-only member's edits, said (issue 48)", () => {
  it.each([
    { count: 1, line: '1 file changed here, not sent: you are a read-only member of this service' },
    { count: 3, line: '3 files changed here, not sent: you are a read-only member of this service' },
  ])('$count: said in the singular or the plural, with the way out (a role)', ({ count, line }) => {
    expect(readOnlyLine(count)).toBe(`${line} (an operator can give you write access)`);
  });
});
