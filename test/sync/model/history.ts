import fc from 'fast-check';
import { FLOWS, PATHS } from './checkout.ts';
import { look, round } from './agent.ts';
import { checkoutPaths, commit, edit, pull, remove, rename, switchBranch } from './git.ts';
import { flowOf } from './service.ts';
import { versionKey, type Team } from './team.ts';
import {
  confirmDeletions,
  resolveMine,
  resolveTheirs,
  restoreDeletions,
  takeNewer,
  takeNotInCheckout,
} from './user.ts';

/*
 * A history is a list of steps, each plain data naming a checkout by its index (taken modulo the team's size) and
 * files by path, so that every step can run in any state (a step with nothing to do does nothing) and fast-check
 * shrinks a failing history by dropping steps and simplifying them.
 */

export type Step =
  | { do: 'edit'; who: number; path: string }
  | { do: 'delete'; who: number; paths: string[] }
  | { do: 'rm -r'; who: number; flow: string }
  | { do: 'rename'; who: number; from: string; to: string }
  | { do: 'commit'; who: number }
  | { do: 'switch branch'; who: number; to: string; edits: string[]; deletes: string[] }
  | { do: 'git pull'; who: number }
  | { do: 'git checkout --'; who: number; paths: string[] }
  | { do: 'round'; who: number; answerLost: boolean }
  | { do: 'look'; who: number }
  | { do: 'told look'; who: number; flows: string[] }
  | { do: 'resolve mine'; who: number }
  | { do: 'resolve theirs'; who: number }
  | { do: 'take newer'; who: number }
  | { do: 'sync --yes'; who: number }
  | { do: 'restore held deletions'; who: number }
  | { do: 'take not in checkout'; who: number }
  | { do: 'stop agent'; who: number }
  | { do: 'start agent'; who: number }
  | { do: 'lose state'; who: number }
  | { do: 'restore service backup'; back: number };

// Skewed towards A and B, so that a short history has two people at work on the same files.
const who = fc.oneof(
  { weight: 3, arbitrary: fc.constantFrom(0, 1) },
  { weight: 1, arbitrary: fc.constantFrom(2, 3) },
);
// Skewed towards a few files, so that two checkouts change the same file often (a conflict needs it).
const path = fc.oneof(
  { weight: 4, arbitrary: fc.constant(PATHS[0]!) },
  { weight: 2, arbitrary: fc.constant(PATHS[1]!) },
  { weight: 3, arbitrary: fc.constantFrom(...PATHS) },
);
const paths = (max: number) => fc.uniqueArray(path, { minLength: 1, maxLength: max });

export const stepArbitrary: fc.Arbitrary<Step> = fc.oneof(
  { weight: 6, arbitrary: fc.record({ do: fc.constant('edit' as const), who, path }) },
  { weight: 2, arbitrary: fc.record({ do: fc.constant('delete' as const), who, paths: paths(7) }) },
  {
    weight: 1,
    arbitrary: fc.record({ do: fc.constant('rm -r' as const), who, flow: fc.constantFrom(...FLOWS) }),
  },
  { weight: 1, arbitrary: fc.record({ do: fc.constant('rename' as const), who, from: path, to: path }) },
  { weight: 1, arbitrary: fc.record({ do: fc.constant('commit' as const), who }) },
  {
    weight: 1,
    arbitrary: fc.record({
      do: fc.constant('switch branch' as const),
      who,
      to: fc.constantFrom('main', 'topic', 'old'),
      edits: fc.uniqueArray(path, { maxLength: 4 }),
      deletes: fc.uniqueArray(path, { maxLength: 6 }),
    }),
  },
  { weight: 1, arbitrary: fc.record({ do: fc.constant('git pull' as const), who }) },
  { weight: 1, arbitrary: fc.record({ do: fc.constant('git checkout --' as const), who, paths: paths(3) }) },
  { weight: 8, arbitrary: fc.record({ do: fc.constant('round' as const), who, answerLost: fc.boolean() }) },
  { weight: 5, arbitrary: fc.record({ do: fc.constant('look' as const), who }) },
  // The live feed's look (issue 47): of the flows a teammate wrote, the others as last seen.
  {
    weight: 4,
    arbitrary: fc.record({
      do: fc.constant('told look' as const),
      who,
      flows: fc.uniqueArray(fc.constantFrom(...FLOWS), { minLength: 1, maxLength: FLOWS.length }),
    }),
  },
  { weight: 3, arbitrary: fc.record({ do: fc.constant('resolve mine' as const), who }) },
  { weight: 3, arbitrary: fc.record({ do: fc.constant('resolve theirs' as const), who }) },
  { weight: 3, arbitrary: fc.record({ do: fc.constant('take newer' as const), who }) },
  { weight: 3, arbitrary: fc.record({ do: fc.constant('sync --yes' as const), who }) },
  { weight: 1, arbitrary: fc.record({ do: fc.constant('restore held deletions' as const), who }) },
  { weight: 1, arbitrary: fc.record({ do: fc.constant('take not in checkout' as const), who }) },
  { weight: 1, arbitrary: fc.record({ do: fc.constant('stop agent' as const), who }) },
  { weight: 1, arbitrary: fc.record({ do: fc.constant('start agent' as const), who }) },
  { weight: 1, arbitrary: fc.record({ do: fc.constant('lose state' as const), who }) },
  {
    weight: 1,
    arbitrary: fc.record({
      do: fc.constant('restore service backup' as const),
      back: fc.integer({ min: 1, max: 6 }),
    }),
  },
);

/** Carries out one step of a history on the team. */
export function apply(team: Team, step: Step): void {
  if (step.do === 'restore service backup') return restoreService(team, step.back);
  const c = team.checkouts[step.who % team.checkouts.length]!;
  switch (step.do) {
    case 'edit':
      return edit(team, c, step.path);
    case 'delete':
      return remove(team, c, step.paths);
    case 'rm -r':
      return remove(
        team,
        c,
        PATHS.filter((path) => flowOf(path) === step.flow),
      );
    case 'rename':
      return rename(team, c, step.from, step.to);
    case 'commit':
      return commit(c);
    case 'switch branch':
      return switchBranch(team, c, step.to, step);
    case 'git pull':
      return pull(team, c);
    case 'git checkout --':
      return checkoutPaths(team, c, step.paths);
    case 'round':
      return round(team, c, { answerLost: step.answerLost });
    case 'look':
      return look(team, c);
    case 'told look':
      return look(team, c, step.flows);
    case 'resolve mine':
      return resolveMine(team, c);
    case 'resolve theirs':
      return resolveTheirs(team, c);
    case 'take newer':
      return takeNewer(team, c);
    case 'sync --yes':
      return confirmDeletions(team, c);
    case 'restore held deletions':
      return restoreDeletions(team, c);
    case 'take not in checkout':
      return takeNotInCheckout(team, c);
    case 'stop agent':
      // What the agent kept in memory goes with it; the state stays.
      c.running = false;
      c.held = 0;
      c.notInCheckout.clear();
      return;
    case 'start agent':
      // The engine's start: a scan, a full look at the service (a state that knows nothing learns it first) and its
      // first round before anything is said; its memory (not in this checkout, the held count) is counted anew.
      if (c.running) return;
      c.running = true;
      c.learned = c.bases.size > 0;
      look(team, c);
      return round(team, c);
    case 'lose state':
      // A state rebuilt (deleted, damaged and set aside) as its agent starts: it learns the service at once, as a
      // new clone would (the engine's first round).
      c.bases.clear();
      c.rows.clear();
      c.sent.clear();
      c.learned = false;
      c.held = 0;
      c.heldSet.clear();
      c.confirmed.clear();
      c.gitHeld.clear();
      return c.running ? look(team, c) : undefined;
  }
}

function restoreService(team: Team, back: number) {
  const before = new Map([...team.service.history].map(([path, versions]) => [path, [...versions]]));
  if (!team.service.restoreBackup(back)) return;
  for (const [path, versions] of before)
    for (const version of versions)
      if (!team.service.history.get(path)?.some((v) => v.hash === version.hash))
        team.takenByRestore.add(versionKey(path, version.hash));
}

/** A step in words, for the shrunk history a failure prints. */
export function describe(step: Step, checkouts: number): string {
  if (step.do === 'restore service backup')
    return `the service is restored from a backup ${step.back} changes old`;
  const name = 'ABCD'[step.who % checkouts]!;
  switch (step.do) {
    case 'edit':
      return `${name} edits ${step.path}`;
    case 'delete':
      return `${name} deletes ${step.paths.join(' ')}`;
    case 'rm -r':
      return `${name} runs rm -r ${step.flow}`;
    case 'rename':
      return `${name} renames ${step.from} to ${step.to}`;
    case 'switch branch':
      return `${name} switches to branch ${step.to} (a new one: edits ${step.edits.join(' ') || 'none'}, deletes ${step.deletes.join(' ') || 'none'})`;
    case 'git checkout --':
      return `${name} runs git checkout -- ${step.paths.join(' ')}`;
    case 'round':
      return step.answerLost ? `${name}'s round (its agent killed before the answer)` : `${name}'s round`;
    default:
      return `${name}: ${step.do}`;
  }
}
