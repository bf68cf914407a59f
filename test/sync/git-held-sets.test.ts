import { describe, expect, it } from 'vitest';
import { SyncState } from '../../src/sync/state.ts';

/**
 * Git's change sets held (issue 46) decided one at a time: the window's card of a set sends or keeps that set only,
 * and `sync --yes` / `--keep` (no name) every one. Each row two sets held (`branch cleanup`: a.yml and b.yml;
 * `git checkout -- on main`: c.yml), a word on them, described, and the sets that still wait, with their files.
 */
const file = (path: string) => ({
  flowPath: 'flows/ci',
  path,
  size: 1,
  mtimeMs: 1,
  localHash: `h-${path}`,
  warning: null,
});
const held = (path: string) => ({ flowPath: 'flows/ci', path, hash: `h-${path}` });

const ROWS: {
  description: string;
  decision: 'confirmed' | 'kept';
  name: string | null;
  decided: string[];
  waiting: Record<string, string[]>;
}[] = [
  {
    description: 'kept by name: that set only, the other still waits with its files',
    decision: 'kept',
    name: 'branch cleanup',
    decided: ['a.yml', 'b.yml'],
    waiting: { 'git checkout -- on main': ['c.yml'] },
  },
  {
    description: 'sent by name: that set only',
    decision: 'confirmed',
    name: 'git checkout -- on main',
    decided: ['c.yml'],
    waiting: { 'branch cleanup': ['a.yml', 'b.yml'] },
  },
  {
    description: 'a name that waits no more (decided meanwhile, another window): nothing decided',
    decision: 'confirmed',
    name: 'branch gone',
    decided: [],
    waiting: { 'branch cleanup': ['a.yml', 'b.yml'], 'git checkout -- on main': ['c.yml'] },
  },
  {
    description: 'no name (sync --yes, sync --keep): every set',
    decision: 'kept',
    name: null,
    decided: ['a.yml', 'b.yml', 'c.yml'],
    waiting: {},
  },
];

describe("git's change sets decided one at a time", () => {
  it.each(ROWS)('$description', ({ decision, name, decided, waiting }) => {
    const state = new SyncState(':memory:');
    try {
      const repoId = state.ensureRepo('/r', 'http://svc', 'acme', 'app');
      state.saveLocal(repoId, ['a.yml', 'b.yml', 'c.yml'].map(file));
      state.gitHeld.hold(repoId, 'branch cleanup', [held('a.yml'), held('b.yml')]);
      state.gitHeld.hold(repoId, 'git checkout -- on main', [held('c.yml')]);
      const files = state.gitHeld.decide(repoId, decision, name);
      expect(files.map((f) => f.path).sort()).toEqual(decided);
      const still: Record<string, string[]> = {};
      for (const f of state.gitHeld.heldFiles(repoId)) (still[f.name] ??= []).push(f.path);
      expect(still).toEqual(waiting);
    } finally {
      state.close();
    }
  });
});
