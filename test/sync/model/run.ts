import fc from 'fast-check';
import { realCore, type Core } from './core.ts';
import { apply, describe, stepArbitrary, type Step } from './history.ts';
import { afterStep, quiesce } from './invariants.ts';
import { Team, type TeamShape } from './team.ts';

/*
 * Runs the model: random histories of a team, each step followed by the invariants, the team brought to
 * quiescence at the end. A history that breaks a rule is shrunk by fast-check to a minimal one, printed with the
 * seed (and fast-check's path) that replays it.
 */

export interface ModelOptions {
  runs: number;
  seed?: number;
  /** fast-check's path of a failure: with its seed, replays the shrunk history at once. */
  path?: string;
  core?: Core;
  /** The longest history (steps before quiescence). */
  steps?: number;
  /** Whether a team may have two checkouts carrying one writer label (default: yes). */
  sharedLabels?: boolean;
}

export interface ModelResult {
  histories: number;
  /** Histories that broke a rule (fast-check stops at the first, so 0 or 1). */
  violations: number;
  seed: number;
  failure?: { shape: TeamShape; steps: Step[]; broken: string[]; path: string; shrinks: number };
}

export const shapeArbitrary: fc.Arbitrary<TeamShape> = fc.record({
  checkouts: fc.integer({ min: 2, max: 4 }),
  sharedLabel: fc.boolean(),
});

/** One history on a new team: the rules it broke (empty: none). */
export function runHistory(core: Core, shape: TeamShape, steps: readonly Step[]): string[] {
  const team = new Team(core, shape);
  for (const step of steps) {
    team.step++;
    apply(team, step);
    afterStep(team);
  }
  quiesce(team);
  return team.violations;
}

export function checkModel(options: ModelOptions): ModelResult {
  const core = options.core ?? realCore;
  const shapes =
    options.sharedLabels === false
      ? shapeArbitrary.map((shape) => ({ ...shape, sharedLabel: false }))
      : shapeArbitrary;
  const property = fc.property(
    shapes,
    fc.array(stepArbitrary, { maxLength: options.steps ?? 30 }),
    (shape, steps) => runHistory(core, shape, steps).length === 0,
  );
  const details = fc.check(property, {
    numRuns: options.runs,
    ...(options.seed === undefined ? {} : { seed: options.seed }),
    ...(options.path === undefined ? {} : { path: options.path }),
  });
  const result: ModelResult = {
    histories: details.numRuns,
    violations: details.failed ? 1 : 0,
    seed: details.seed,
  };
  if (details.failed && details.counterexample !== null) {
    const [shape, steps] = details.counterexample;
    result.failure = {
      shape,
      steps,
      broken: runHistory(core, shape, steps),
      path: details.counterexamplePath ?? '',
      shrinks: details.numShrinks,
    };
  }
  return result;
}

/** The result in words: the counts line, then the shrunk history and what it broke. */
export function report(result: ModelResult): string {
  const lines = [`${result.histories} histories, ${result.violations} violations, seed ${result.seed}`];
  const failure = result.failure;
  if (failure) lines.push('', ...historyLines(failure.shape, failure.steps, failure.broken));
  if (failure)
    lines.push('', `replay: npm run model -- --runs 1 --seed ${result.seed} --path ${failure.path}`);
  return lines.join('\n');
}

export function historyLines(shape: TeamShape, steps: readonly Step[], broken: readonly string[]): string[] {
  return [
    `a team of ${shape.checkouts}${shape.sharedLabel ? ' (A and B carry one writer label)' : ''}, all in sync:`,
    ...steps.map((step, index) => `  ${index + 1}. ${describe(step, shape.checkouts)}`),
    `  ${steps.length + 1}. every agent runs rounds and looks until nothing changes`,
    'broke:',
    ...broken.map((line) => `  ${line}`),
  ];
}
