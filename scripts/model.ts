/*
 * `npm run model -- --runs N [--seed S] [--path P] [--core NAME]`: the model of the team (test/sync/model) run over
 * N random histories against flowsync's pure core (or, with --core, one of test/sync/model/variants.ts). Prints
 * `N histories, K violations, seed S` and the shrunk history of a violation; exits 1 on one.
 */
import { parseArgs } from 'node:util';
import { realCore, type Core } from '../test/sync/model/core.ts';
import { checkModel, report } from '../test/sync/model/run.ts';
import * as variants from '../test/sync/model/variants.ts';

const { values } = parseArgs({
  options: {
    runs: { type: 'string', default: '1000' },
    seed: { type: 'string' },
    path: { type: 'string' },
    core: { type: 'string', default: 'real' },
    steps: { type: 'string' },
  },
});
const cores: Record<string, Core> = { real: realCore, ...variants };
const core = cores[values.core];
if (core === undefined) {
  console.error(`--core: one of ${Object.keys(cores).join(', ')}`);
  process.exit(2);
}
const started = performance.now();
const result = checkModel({
  runs: Number(values.runs),
  core,
  ...(values.seed === undefined ? {} : { seed: Number(values.seed) }),
  ...(values.path === undefined ? {} : { path: values.path }),
  ...(values.steps === undefined ? {} : { steps: Number(values.steps) }),
});
const seconds = (performance.now() - started) / 1000;
console.log(report(result));
console.log(`(${seconds.toFixed(1)} s, ${Math.round(result.histories / seconds)} histories/s)`);
process.exit(result.violations > 0 ? 1 : 0);
