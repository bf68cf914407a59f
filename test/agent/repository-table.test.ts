import { describe, expect, it } from 'vitest';
import { RepositoryTable, type RepositoryEntry } from '../../src/agent/repository-table.ts';
import type { PendingRename } from '../../src/agent/rename.ts';

/**
 * The agent's repositories, one entry per root changed through one `update` (issue 39): each row a sequence of
 * changes, described, and what the table holds after them.
 */
const identity = { root: '/home/dev/app', owner: 'acme', name: 'app' };
const rename: PendingRename = {
  to: { ...identity, name: 'app2' },
  message: 'acme/app is now acme/app2 on origin',
};
const unwatched: RepositoryEntry = { kind: 'unwatched', ...identity, flowRoots: ['flows'] };
const absent: RepositoryEntry = {
  kind: 'absent',
  ...identity,
  flowRoots: ['flows'],
  configured: { path: identity.root, enabled: true, flowRoots: ['flows'] } as never,
  problem: null,
};

type Change = (entry: RepositoryEntry | undefined) => RepositoryEntry | undefined;
const rows: { description: string; changes: Change[]; expected: Partial<RepositoryEntry> | undefined }[] = [
  { description: 'a root never added is not known', changes: [], expected: undefined },
  {
    description: 'an entry added is known in its state',
    changes: [() => unwatched],
    expected: { kind: 'unwatched' },
  },
  {
    description: 'a state change replaces the entry: a root is never in two states',
    changes: [() => absent, () => unwatched],
    expected: { kind: 'unwatched' },
  },
  {
    description: 'a rename waiting stays with the root when it goes from absent to unwatched',
    changes: [() => ({ ...absent, rename }), () => unwatched],
    expected: { kind: 'unwatched', rename },
  },
  {
    description: 'a change that says the rename is gone takes it away',
    changes: [() => ({ ...unwatched, rename }), (entry) => entry && { ...entry, rename: undefined }],
    expected: { kind: 'unwatched', rename: undefined },
  },
  {
    description: 'forgotten: removed, or renamed and synced under its new name',
    changes: [() => ({ ...unwatched, rename }), () => undefined],
    expected: undefined,
  },
];

describe('the agent’s repository table', () => {
  for (const row of rows)
    it(row.description, () => {
      const table = new RepositoryTable();
      for (const change of row.changes) table.update(identity.root, change);
      const entry = table.get(identity.root);
      if (row.expected === undefined) expect(entry).toBeUndefined();
      else expect(entry).toMatchObject(row.expected);
      expect(table.roots()).toEqual(entry ? [identity.root] : []);
    });

  it('lists no engine for a root that does not run one', () => {
    const table = new RepositoryTable();
    table.update(identity.root, () => absent);
    expect(table.running(identity.root)).toBeUndefined();
    expect(table.watched()).toEqual([]);
  });
});
