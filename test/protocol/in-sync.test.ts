import { describe, expect, it } from 'vitest';
import {
  NOT_WATCHED_LINE,
  TROUBLE_PHASES,
  phaseWords,
  stateWord,
  inSyncOf,
  inSyncOfAll,
  type SyncFacts,
  type SyncVerdict,
} from '../../src/protocol/index.ts';

/**
 * "In sync", decided once (issue 45): each row a repository's facts, described, and the verdict every place says
 * (`start`'s lines, `resume`, `status --json`'s inSync, the window's badge, the tray). The rule is read off the
 * table; a new case is one row. "In sync" is said only when an agent watches the disk and nothing differs.
 */
const settled: SyncFacts = {
  phase: 'idle',
  paused: false,
  counts: { pending: 0, conflicts: 0, behind: 0 },
  heldDeletions: 0,
  notInCheckout: 0,
  configProblem: null,
  nothingToSync: null,
  message: null,
};

type Counts = Partial<SyncFacts['counts']>;
type Row = { description: string; facts: Partial<Omit<SyncFacts, 'counts'>> & Counts; verdict: SyncVerdict };

const verdict = (state: SyncVerdict['state'], line: string): SyncVerdict => ({
  inSync: state === 'in sync',
  state,
  line,
});

const ROWS: Row[] = [
  {
    description: 'watched, nothing pending, nothing newer, nothing waiting: in sync',
    facts: {},
    verdict: verdict('in sync', 'in sync'),
  },
  {
    description: 'no agent watches it (status with none running): not in sync, whatever the state counted',
    facts: { phase: null },
    verdict: verdict('not watched', NOT_WATCHED_LINE),
  },
  {
    description: 'no agent watches it and the state had changes pending: still not watched, the disk unknown',
    facts: { phase: null, pending: 2 },
    verdict: verdict('not watched', NOT_WATCHED_LINE),
  },
  {
    description: 'an engine stopped watches nothing either',
    facts: { phase: 'stopped' },
    verdict: verdict('not watched', NOT_WATCHED_LINE),
  },
  {
    description:
      'a teammate’s edits newer on the service, nothing here to send: behind, never in sync (issue 41, 46)',
    facts: { behind: 2 },
    verdict: verdict('behind', 'your changes are sent; 2 files newer on the service'),
  },
  {
    description: 'changes not sent yet, the round not started: pending, with what is newer there too',
    facts: { pending: 3, behind: 1 },
    verdict: verdict('pending', '3 files pending, 1 file newer on the service'),
  },
  {
    description: 'one change pending is said in the singular',
    facts: { pending: 1 },
    verdict: verdict('pending', '1 file pending'),
  },
  {
    description: 'a round on its way: sending',
    facts: { phase: 'syncing', pending: 4 },
    verdict: verdict('sending', '4 files pending'),
  },
  {
    description: 'a round on its way with nothing counted pending (a look at the service): still sending',
    facts: { phase: 'syncing' },
    verdict: verdict('sending', 'sending'),
  },
  {
    description: 'a scan of the disk that found nothing yet: looking, not in sync until it ends',
    facts: { phase: 'scanning' },
    verdict: verdict('looking', 'looking at the disk'),
  },
  {
    description: 'a scan that found changes: pending',
    facts: { phase: 'scanning', pending: 2 },
    verdict: verdict('pending', '2 files pending'),
  },
  {
    description:
      'a file in conflict waits for its user: never in sync, and what else differs is said after it',
    facts: { conflicts: 2, pending: 1, behind: 3 },
    verdict: verdict('waiting for you', '2 in conflict, 1 file pending, 3 files newer on the service'),
  },
  {
    description: 'deletions held wait for their user',
    facts: { heldDeletions: 40 },
    verdict: verdict('waiting for you', '40 deletions held'),
  },
  {
    description: 'files on the service not in this checkout wait for their user',
    facts: { notInCheckout: 3 },
    verdict: verdict('waiting for you', '3 files not in this checkout'),
  },
  {
    description: 'an invalid hand edit of the repository config waits for its user',
    facts: { configProblem: '.flowsync/repo-config.json: unknown field "x"' },
    verdict: verdict('waiting for you', 'repo-config.json not valid'),
  },
  {
    description: 'what waits for its user is known without an agent too (the state recorded the conflict)',
    facts: { phase: null, conflicts: 1 },
    verdict: verdict('waiting for you', '1 in conflict'),
  },
  {
    description: 'paused with nothing pending: paused, never in sync (what changes meanwhile waits)',
    facts: { phase: 'paused', paused: true },
    verdict: verdict('paused', 'paused'),
  },
  {
    description: 'paused with changes counted: paused, with them',
    facts: { phase: 'paused', paused: true, pending: 2 },
    verdict: verdict('paused', 'paused, 2 files pending'),
  },
  {
    description: 'paused while scanning what changed meanwhile: still paused',
    facts: { phase: 'scanning', paused: true, pending: 1 },
    verdict: verdict('paused', 'paused, 1 file pending'),
  },
  {
    description: 'paused and not watched (no agent runs): paused says more, it stays paused when one starts',
    facts: { phase: null, paused: true },
    verdict: verdict('paused', 'paused'),
  },
  {
    description: 'the service does not answer: offline, over what waits (it is not known meanwhile)',
    facts: { phase: 'offline', pending: 3, conflicts: 1 },
    verdict: verdict('offline', 'offline, 3 files pending'),
  },
  {
    description: 'the service refused the token: signed out (what to fix), its state still unauthorized',
    facts: { phase: 'unauthorized' },
    verdict: verdict('unauthorized', 'signed out'),
  },
  {
    description: 'the state cannot be written: its data folder is named, not "storage"',
    facts: { phase: 'storage', pending: 1 },
    verdict: verdict('storage', 'data folder not writable, 1 file pending'),
  },
  {
    description: 'its folder is gone: missing',
    facts: { phase: 'missing' },
    verdict: verdict('missing', 'missing'),
  },
  {
    description: 'another checkout is its source: not synced here, in the agent’s words',
    facts: { phase: 'elsewhere', message: 'synced from ~/code/app (its source)' },
    verdict: verdict('not synced', 'synced from ~/code/app (its source)'),
  },
  {
    description:
      'nothing differs as of the last look, and the look asked now got no answer: in sync only as of that look (issue 47)',
    facts: { notReached: { since: '14:02' } },
    verdict: verdict('not reached', 'in sync as of 14:02; the service could not be reached now'),
  },
  {
    description: 'nothing to send and no look ever went through: nothing said of the service but that',
    facts: { notReached: { since: null } },
    verdict: verdict('not reached', 'nothing to send; the service could not be reached to look at it'),
  },
  {
    description: 'files newer there at the last look, the look now not reached: still behind (what is known)',
    facts: { behind: 1, notReached: { since: '14:02' } },
    verdict: verdict('behind', 'your changes are sent; 1 file newer on the service'),
  },
  {
    description: 'changes pending and the look not reached: pending says it',
    facts: { pending: 2, notReached: { since: '14:02' } },
    verdict: verdict('pending', '2 files pending'),
  },
  {
    description: 'the look reached the service (notReached null): in sync',
    facts: { notReached: null },
    verdict: verdict('in sync', 'in sync'),
  },
  {
    description: 'none of its flow folders is there: nothing to sync, not in sync',
    facts: { nothingToSync: 'no flows/ folder in ~/notes: nothing to sync' },
    verdict: verdict('nothing to sync', 'no flows/ folder in ~/notes: nothing to sync'),
  },
  {
    description:
      'none of its flow folders is there and deletions pending (they were there before): pending first',
    facts: { nothingToSync: 'no flows/ folder in ~/notes: nothing to sync', pending: 5 },
    verdict: verdict('pending', '5 files pending'),
  },
];

function facts({ pending = 0, conflicts = 0, behind = 0, ...rest }: Row['facts']): SyncFacts {
  return { ...settled, ...rest, counts: { pending, conflicts, behind } };
}

const PHASE_ROWS: { description: string; phase: Parameters<typeof phaseWords>[0]; words: string }[] = [
  {
    description: 'a scan of the disk is the window\'s and the tray\'s "looking at the disk"',
    phase: 'scanning',
    words: 'looking at the disk',
  },
  {
    description: 'a round on its way is "sending", as the tray says it (never "syncing")',
    phase: 'syncing',
    words: 'sending',
  },
  {
    description: 'a stopped engine watches nothing: "not watched", as status says with no agent',
    phase: 'stopped',
    words: 'not watched',
  },
  {
    description: 'another checkout is its source: "not synced", which is not paused',
    phase: 'elsewhere',
    words: 'not synced',
  },
  { description: 'its user paused it', phase: 'paused', words: 'paused' },
  { description: 'a refused token is "signed out", what to fix', phase: 'unauthorized', words: 'signed out' },
  {
    description: 'a state file that cannot be written names the data folder',
    phase: 'storage',
    words: 'data folder not writable',
  },
  { description: 'the service does not answer', phase: 'offline', words: 'offline' },
];

describe('phaseWords: a phase named in a line is said in the word of the state it makes', () => {
  for (const row of PHASE_ROWS) it(row.description, () => expect(phaseWords(row.phase)).toBe(row.words));
});

describe('inSyncOf: whether a repository is in sync, and its words', () => {
  for (const row of ROWS) it(row.description, () => expect(inSyncOf(facts(row.facts))).toEqual(row.verdict));

  it('every trouble phase is a state of its own, never in sync (the list is sync-phase.ts’s), said in its words', () => {
    for (const phase of TROUBLE_PHASES)
      expect(inSyncOf(facts({ phase }))).toEqual(
        verdict(phase as SyncVerdict['state'], stateWord(phase as SyncVerdict['state'])),
      );
  });
});

const ALL: { description: string; repos: Row['facts'][]; verdict: SyncVerdict }[] = [
  {
    description: 'every repository in sync: in sync',
    repos: [{}, {}],
    verdict: verdict('in sync', 'in sync'),
  },
  {
    description: 'one in trouble speaks for all, named',
    repos: [{ pending: 2 }, { phase: 'offline', owner: 'acme', name: 'web', conflicts: 1 }],
    verdict: verdict('offline', 'acme/web offline'),
  },
  {
    description: 'what waits is summed over the repositories',
    repos: [{ conflicts: 1 }, { conflicts: 2, heldDeletions: 40 }, { pending: 3 }],
    verdict: verdict('waiting for you', '3 in conflict, 40 deletions held'),
  },
  {
    description: 'one paused is named, with every repository’s pending',
    repos: [{ paused: true, phase: 'paused', owner: 'acme', name: 'app', pending: 1 }, { pending: 1 }],
    verdict: verdict('paused', 'acme/app paused, 2 files pending'),
  },
  {
    description: 'two paused are counted',
    repos: [
      { paused: true, phase: 'paused' },
      { paused: true, phase: 'paused' },
    ],
    verdict: verdict('paused', '2 repositories paused'),
  },
  {
    description: 'pending is summed',
    repos: [{ pending: 1 }, { pending: 2 }],
    verdict: verdict('pending', '3 files pending'),
  },
  {
    description: 'behind is summed, under what is pending elsewhere',
    repos: [{ behind: 1 }, { behind: 2 }],
    verdict: verdict('behind', 'your changes are sent; 3 files newer on the service'),
  },
  {
    description:
      'one whose look got no answer now: not reached, as of its last look, over the others in sync',
    repos: [{}, { notReached: { since: '14:02' }, owner: 'acme', name: 'app' }],
    verdict: verdict('not reached', 'in sync as of 14:02; the service could not be reached now'),
  },
  {
    description: 'files newer in one, the look not reached in another: behind is known, said first',
    repos: [{ behind: 1 }, { notReached: { since: '14:02' } }],
    verdict: verdict('behind', 'your changes are sent; 1 file newer on the service'),
  },
  {
    description: 'a repository with nothing to sync is said last, named',
    repos: [{}, { nothingToSync: 'no flows/', owner: 'acme', name: 'notes' }],
    verdict: verdict('nothing to sync', 'acme/notes has nothing to sync'),
  },
  {
    description: 'a repository synced from another checkout is not this agent’s: left out',
    repos: [{}, { phase: 'elsewhere', message: 'synced from ~/code/app' }],
    verdict: verdict('in sync', 'in sync'),
  },
  {
    description: 'a repository no agent watches is named',
    repos: [{}, { phase: 'stopped', owner: 'acme', name: 'app' }],
    verdict: verdict('not watched', `acme/app: ${NOT_WATCHED_LINE}`),
  },
];

describe('inSyncOfAll: one verdict over several repositories (the tray, the stop line)', () => {
  for (const row of ALL)
    it(row.description, () => expect(inSyncOfAll(row.repos.map(facts))).toEqual(row.verdict));
});
