import { describe, expect, it } from 'vitest';
import { needsOf, needsOfAll, type WaitingFacts } from '../../src/protocol/index.ts';

/**
 * What waits for its user in a repository (issue 39 step 5), decided once by needsOf: each row a repository's
 * facts and what waits in it, in the words the tray, the card badge and `start`'s lines use. A repository with
 * anything here is never "in sync", and `status` exits 4 for it.
 */
const nothing: WaitingFacts = {
  counts: { conflicts: 0 },
  heldDeletions: 0,
  notInCheckout: 0,
  configProblem: null,
};

const ROWS: {
  description: string;
  facts: Partial<WaitingFacts> & { conflicts?: number };
  waits: string[];
}[] = [
  { description: 'nothing waits in a repository synced and settled', facts: {}, waits: [] },
  { description: 'a file in conflict waits', facts: { conflicts: 1 }, waits: ['1 in conflict'] },
  { description: 'deletions held wait', facts: { heldDeletions: 40 }, waits: ['40 deletions held'] },
  {
    description: 'one deletion held is said in the singular',
    facts: { heldDeletions: 1 },
    waits: ['1 deletion held'],
  },
  {
    description: 'files on the service not in this checkout wait (the tray and the exit code forgot them)',
    facts: { notInCheckout: 3 },
    waits: ['3 files not in this checkout'],
  },
  {
    description: 'an invalid hand edit of .flowsync/repo-config.json waits: it is not sent until fixed',
    facts: { configProblem: '.flowsync/repo-config.json: editor must be text (it is a number)' },
    waits: ['repo-config.json not valid'],
  },
  {
    description: 'everything at once, in one order: conflicts, deletions, files not here, the config',
    facts: { conflicts: 2, heldDeletions: 12, notInCheckout: 1, configProblem: 'bad' },
    waits: [
      '2 in conflict',
      '12 deletions held',
      '1 file not in this checkout',
      'repo-config.json not valid',
    ],
  },
  {
    description: 'a config problem that is absent (an older agent, the state file alone) is none',
    facts: { configProblem: undefined },
    waits: [],
  },
];

describe('needsOf: what waits for its user', () => {
  for (const row of ROWS)
    it(row.description, () => {
      const { conflicts = 0, ...rest } = row.facts;
      const facts = { ...nothing, ...rest, counts: { conflicts } };
      expect(needsOf(facts).map((need) => need.words)).toEqual(row.waits);
    });

  it('over several repositories each kind is summed (the tray)', () => {
    const app = { ...nothing, counts: { conflicts: 1 }, notInCheckout: 2 };
    const web = { ...nothing, counts: { conflicts: 2 }, configProblem: 'bad' };
    const api = { ...nothing, configProblem: 'bad too' };
    expect(needsOfAll([app, web, api]).map((need) => need.words)).toEqual([
      '3 in conflict',
      '2 files not in this checkout',
      '2 repo-config.json files not valid',
    ]);
    expect(needsOfAll([nothing, nothing])).toEqual([]);
  });
});
