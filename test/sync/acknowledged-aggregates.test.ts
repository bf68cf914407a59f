import { createHash } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { flowHashInput } from '../../src/protocol/index.ts';
import { SyncState } from '../../src/sync/index.ts';
import { memoryStateEachTest } from '../support/memory-state.ts';

/**
 * The look at the service compares each flow's aggregate with what this checkout acknowledged. What it hashes must
 * be flowHashInput's string exactly, or a flow in sync would be listed file by file at each look: the same lines in
 * the same order, SQLite's byte order where it is not JavaScript's included. The aggregates are kept in the state
 * (at 100,000 files, making them at each look was a fifth of a `flowsync status`): a kept one that is stale and
 * equal to the service's would hide a teammate's edit, so whatever writes the files, they must equal the ones made
 * from the files now.
 */
const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');

/** Each flow's aggregate made from the files now, in JavaScript: what the kept ones must equal. */
function madeNow(state: SyncState, repoId: number): Map<string, string> {
  const byFlow = new Map<string, { path: string; hash: string }[]>();
  for (const file of state.files(repoId)) {
    if (file.ackedHash === null) continue;
    const files = byFlow.get(file.flowPath) ?? [];
    byFlow.set(file.flowPath, files);
    files.push({ path: file.path, hash: file.ackedHash });
  }
  return new Map([...byFlow].map(([flowPath, files]) => [flowPath, sha256(flowHashInput(files))]));
}

/** A file on disk acknowledged by the service with this hash. */
function ackFile(state: SyncState, repoId: number, flowPath: string, path: string, hash: string): void {
  state.saveLocal(repoId, [{ flowPath, path, size: 1, mtimeMs: 1, localHash: 'disk', warning: null }]);
  state.acknowledge(repoId, [{ flowPath, stored: [{ path, hash, fileId: null }], dropped: [] }]);
}

/** Runs `test` with the path of a state file in a folder of its own, removed after. */
function withStateFile(test: (path: string) => void): void {
  const dir = mkdtempSync(join(tmpdir(), 'flowsync-aggregates-'));
  try {
    test(join(dir, 'state.db'));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

describe('each flow’s aggregate is the SHA-256 of flowHashInput of its acknowledged files', () => {
  const fixture = memoryStateEachTest();
  const { local } = fixture;
  const ack = (flowPath: string, path: string, hash: string) =>
    ackFile(fixture.state, fixture.repoId, flowPath, path, hash);

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
      const expected = sha256(flowHashInput(row.acked.map(([path, hash]) => ({ path, hash }))));
      expect(fixture.state.acknowledgedAggregates(fixture.repoId)).toEqual(new Map([['flows/x', expected]]));
      // Kept, and read back the same; and asked for one flow.
      expect(fixture.state.acknowledgedAggregates(fixture.repoId)).toEqual(new Map([['flows/x', expected]]));
      expect(fixture.state.acknowledgedAggregates(fixture.repoId, ['flows/x', 'flows/none'])).toEqual(
        new Map([['flows/x', expected]]),
      );
    });

  it('a flow with no acknowledged file has none; each flow has its own', () => {
    local('flows/none', 'a.yaml');
    ack('flows/y', 'a.yaml', 'h1');
    ack('flows/x', 'a.yaml', 'h2');
    expect(fixture.state.acknowledgedAggregates(fixture.repoId)).toEqual(
      new Map([
        ['flows/x', sha256(flowHashInput([{ path: 'a.yaml', hash: 'h2' }]))],
        ['flows/y', sha256(flowHashInput([{ path: 'a.yaml', hash: 'h1' }]))],
      ]),
    );
  });

  it('a kept aggregate is made again after an acknowledgement of its flow changed, and only its flow’s', () => {
    ack('flows/x', 'a.yaml', 'h1');
    ack('flows/y', 'a.yaml', 'h1');
    const first = fixture.state.acknowledgedAggregates(fixture.repoId);
    ack('flows/x', 'a.yaml', 'h2');
    const kept = fixture.state.db
      .prepare('SELECT flow_path, hash FROM acked_aggregates ORDER BY flow_path')
      .raw()
      .all();
    // The changed flow's is forgotten by the database's own triggers; the other stays as it was made.
    expect(kept).toEqual([
      ['flows/x', null],
      ['flows/y', first.get('flows/y')],
    ]);
    expect(fixture.state.acknowledgedAggregates(fixture.repoId)).toEqual(
      madeNow(fixture.state, fixture.repoId),
    );
    expect(fixture.state.acknowledgedAggregates(fixture.repoId).get('flows/x')).not.toBe(
      first.get('flows/x'),
    );
  });

  it('hasAcknowledged says whether any file is', () => {
    local('flows/x', 'a.yaml');
    expect(fixture.state.hasAcknowledged(fixture.repoId)).toBe(false);
    ack('flows/x', 'b.yaml', 'h1');
    expect(fixture.state.hasAcknowledged(fixture.repoId)).toBe(true);
  });

  it('a reader makes what it finds forgotten, and keeps nothing', () =>
    withStateFile((path) => {
      const writer = new SyncState(path);
      const id = writer.ensureRepo('/r', 'http://svc', 'acme', 'app');
      ackFile(writer, id, 'f', 'a', 'h');
      const reader = new SyncState(path, { reader: true });
      expect(reader.acknowledgedAggregates(id)).toEqual(madeNow(writer, id));
      expect(writer.db.prepare('SELECT hash FROM acked_aggregates').pluck().all()).toEqual([null]);
      reader.close();
      writer.close();
    }));

  it('a state made before the aggregates were kept has each of its flows’ made at its first look', () =>
    withStateFile((path) => {
      const made = new SyncState(path);
      const id = made.ensureRepo('/r', 'http://svc', 'acme', 'app');
      ackFile(made, id, 'f', 'a', 'h1');
      ackFile(made, id, 'f', 'b', 'h2');
      ackFile(made, id, 'g', 'a', 'h3');
      made.close();
      // As the flowsync before it left the file: no table, no triggers, one schema version fewer.
      const old = new Database(path);
      old.exec(`DROP TRIGGER acked_aggregates_insert; DROP TRIGGER acked_aggregates_update;
        DROP TRIGGER acked_aggregates_delete; DROP TABLE acked_aggregates;`);
      old.pragma(`user_version = ${(old.pragma('user_version', { simple: true }) as number) - 1}`);
      old.close();
      const upgraded = new SyncState(path);
      expect(upgraded.acknowledgedAggregates(id)).toEqual(madeNow(upgraded, id));
      expect(upgraded.acknowledgedAggregates(id).size).toBe(2);
      upgraded.close();
    }));
});

/** A write of the files table, by the state's own methods or by SQL of its own, as any writer could. */
type Write =
  | { kind: 'disk'; flow: number; file: number }
  | { kind: 'ack'; flow: number; file: number; hash: number }
  | { kind: 'drop'; flow: number; file: number }
  | { kind: 'gone'; flow: number; file: number }
  | { kind: 'adopt'; flow: number; file: number; hash: number }
  | { kind: 'rename'; flow: number; file: number; toFlow: number; toFile: number }
  | { kind: 'delete'; flow: number; file: number }
  | { kind: 'forget' }
  | { kind: 'look'; flows: number[] | null };

// Two flows of two files: writes meet the same files often.
const index = fc.integer({ min: 0, max: 1 });
const write: fc.Arbitrary<Write> = fc.oneof(
  fc.record({ kind: fc.constant('disk' as const), flow: index, file: index }),
  fc.record({ kind: fc.constant('ack' as const), flow: index, file: index, hash: index }),
  fc.record({ kind: fc.constant('drop' as const), flow: index, file: index }),
  fc.record({ kind: fc.constant('gone' as const), flow: index, file: index }),
  fc.record({ kind: fc.constant('adopt' as const), flow: index, file: index, hash: index }),
  fc.record({
    kind: fc.constant('rename' as const),
    flow: index,
    file: index,
    toFlow: index,
    // Also to a name no other write makes: a rename that lands (UPDATE OR IGNORE skips one onto a file there).
    toFile: fc.integer({ min: 0, max: 3 }),
  }),
  fc.record({ kind: fc.constant('delete' as const), flow: index, file: index }),
  // The repository forgotten (a rename syncs it from a fresh outbox): its files go with it, by the cascade.
  fc.record({ kind: fc.constant('forget' as const) }),
  fc.record({ kind: fc.constant('look' as const), flows: fc.option(fc.array(index, { maxLength: 3 })) }),
);

describe('the kept aggregates equal those made from the files now, whatever wrote the files', () => {
  it('after any sequence of writes and looks', () => {
    fc.assert(
      fc.property(fc.array(write, { minLength: 5, maxLength: 40, size: 'max' }), (writes) => {
        const state = new SyncState(':memory:');
        try {
          let repoId = state.ensureRepo('/r', 'http://svc', 'acme', 'app');
          const flow = (n: number) => `flows/${n}`;
          const file = (n: number) => `f${n}.yaml`;
          for (const w of writes) {
            const key = {
              flowPath: flow('flow' in w ? w.flow : 0),
              path: file('file' in w ? w.file : 0),
            };
            switch (w.kind) {
              case 'disk':
                state.saveLocal(repoId, [{ ...key, size: 1, mtimeMs: 1, localHash: 'disk', warning: null }]);
                break;
              case 'ack':
                ackFile(state, repoId, key.flowPath, key.path, `h${w.hash}`);
                break;
              case 'drop':
                state.acknowledge(repoId, [{ flowPath: key.flowPath, stored: [], dropped: [key.path] }]);
                break;
              case 'gone':
                state.markGone(repoId, [key]);
                break;
              case 'adopt':
                state.adoptServiceFiles(repoId, [{ ...key, hash: `h${w.hash}`, id: 'x' }]);
                break;
              case 'rename':
                state.db
                  .prepare(
                    `UPDATE OR IGNORE files SET flow_path = ?, path = ? WHERE repo_id = ? AND flow_path = ? AND path = ?`,
                  )
                  .run(flow(w.toFlow), file(w.toFile), repoId, key.flowPath, key.path);
                break;
              case 'delete':
                state.db
                  .prepare('DELETE FROM files WHERE repo_id = ? AND flow_path = ? AND path = ?')
                  .run(repoId, key.flowPath, key.path);
                break;
              case 'forget':
                state.forgetRepo('/r', 'http://svc');
                repoId = state.ensureRepo('/r', 'http://svc', 'acme', 'app');
                break;
              case 'look': {
                const asked = w.flows === null ? null : w.flows.map(flow);
                const expected = madeNow(state, repoId);
                const wanted =
                  asked === null ? expected : new Map([...expected].filter(([f]) => asked.includes(f)));
                expect(state.acknowledgedAggregates(repoId, asked)).toEqual(wanted);
                break;
              }
            }
          }
          expect(state.acknowledgedAggregates(repoId)).toEqual(madeNow(state, repoId));
        } finally {
          state.close();
        }
      }),
      { numRuns: 300 },
    );
  });
});
