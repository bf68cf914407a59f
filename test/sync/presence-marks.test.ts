import { describe, expect, it } from 'vitest';
import { SyncState } from '../../src/sync/state.ts';

/**
 * The flows whose files appeared on disk or went from it since the look at the service compared them (issue 46),
 * as the state's triggers mark them: each row a step of the disk's side, described, and the flows marked after it.
 * Every writer of the state goes through the same triggers; a mark is once per flow, however many rows one
 * statement changes. (A mark made with INSERT OR IGNORE failed the agent's round with "UNIQUE constraint failed:
 * presence_changed" after 40 deletions were held, in test/e2e/waiting-for-you.test.ts; these rows pass either way.)
 */
const file = (flowPath: string, path: string, localHash = 'h') => ({
  flowPath,
  path,
  size: 1,
  mtimeMs: 1,
  localHash,
  warning: null,
});

type Step = (state: SyncState, repoId: number) => void;
const ROWS: { description: string; before: Step; step: Step; marked: string[] }[] = [
  {
    description: 'a file new on disk marks its flow',
    before: () => {},
    step: (s, r) => s.saveLocal(r, [file('flows/ci', 'a.yml')]),
    marked: ['flows/ci'],
  },
  {
    description: 'many files new in one flow: one mark',
    before: () => {},
    step: (s, r) =>
      s.saveLocal(r, [file('flows/ci', 'a.yml'), file('flows/ci', 'b.yml'), file('flows/x', 'c.yml')]),
    marked: ['flows/ci', 'flows/x'],
  },
  {
    description: 'a file edited in place (the upsert of a row on disk) marks nothing',
    before: (s, r) => s.saveLocal(r, [file('flows/ci', 'a.yml')]),
    step: (s, r) => s.saveLocal(r, [file('flows/ci', 'a.yml', 'h2')]),
    marked: [],
  },
  {
    description: 'a file gone from disk marks its flow',
    before: (s, r) => s.saveLocal(r, [file('flows/ci', 'a.yml')]),
    step: (s, r) => s.markGone(r, [{ flowPath: 'flows/ci', path: 'a.yml' }]),
    marked: ['flows/ci'],
  },
  {
    description: 'a folder of 40 files gone in one statement: one mark',
    before: (s, r) =>
      s.saveLocal(
        r,
        Array.from({ length: 40 }, (_, i) => file('flows/generated', `step-${i}.yml`)),
      ),
    step: (s, r) => s.markGoneUnder(r, 'flows/generated'),
    marked: ['flows/generated'],
  },
  {
    description: 'a file gone and back (a branch switch there and back): its flow, once',
    before: (s, r) => s.saveLocal(r, [file('flows/ci', 'a.yml')]),
    step: (s, r) => {
      s.markGone(r, [{ flowPath: 'flows/ci', path: 'a.yml' }]);
      s.saveLocal(r, [file('flows/ci', 'a.yml')]);
    },
    marked: ['flows/ci'],
  },
];

describe('presence marks', () => {
  it.each(ROWS)('$description', ({ before, step, marked }) => {
    const state = new SyncState(':memory:');
    try {
      const repoId = state.ensureRepo('/r', 'http://svc', 'acme', 'app');
      before(state, repoId);
      state.presence.forget(repoId, state.presence.changed(repoId));
      step(state, repoId);
      expect(state.presence.changed(repoId)).toEqual(marked);
      // Compared: forgotten, until the disk changes again.
      state.presence.forget(repoId, marked);
      expect(state.presence.changed(repoId)).toEqual([]);
    } finally {
      state.close();
    }
  });
});
