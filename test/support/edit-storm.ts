import { existsSync, readdirSync, renameSync } from 'node:fs';
import { join } from 'node:path';
import type { TestRepo } from './repo.ts';

/** A small seeded generator (mulberry32), so that a failing run can be replayed with its seed. */
export function seededRandom(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Flows of `flows/` with files in each: `flows/f0 … f{flows-1}`, `s0.yaml …`. */
export function flowFiles(flows: number, filesPerFlow: number): Record<string, string> {
  const files: Record<string, string> = {};
  for (let f = 0; f < flows; f++) {
    for (let i = 0; i < filesPerFlow; i++) files[`flows/f${f}/s${i}.yaml`] = `flow ${f} step ${i}\n`;
  }
  return files;
}

/**
 * Random edits as a person and their tools make them: files edited, created, deleted and renamed, flow folders
 * created and renamed. `between` runs after each edit (to pace them, or to inject a fault at edit n).
 */
export async function editStorm(
  tree: TestRepo,
  edits: number,
  random: () => number,
  between: (edit: number) => Promise<void> | void = () => {},
): Promise<void> {
  const flowsDir = join(tree.root, 'flows');
  const pick = <T>(items: T[]): T | undefined => items[Math.floor(random() * items.length)];
  const flows = () => (existsSync(flowsDir) ? readdirSync(flowsDir) : []);
  const filesOf = (flow: string) => readdirSync(join(flowsDir, flow));
  for (let edit = 1; edit <= edits; edit++) {
    const roll = random();
    const flow = pick(flows());
    const file = flow ? pick(filesOf(flow)) : undefined;
    if (!flow || roll < 0.05) {
      tree.write(`flows/new-${edit}/main.yaml`, `new flow at edit ${edit}\n`);
    } else if (roll < 0.1) {
      renameSync(join(flowsDir, flow), join(flowsDir, `${flow.split('~')[0]}~${edit}`));
    } else if (roll < 0.3 || !file) {
      tree.write(`flows/${flow}/added-${edit}.yaml`, `added at edit ${edit}\n`);
    } else if (roll < 0.42) {
      tree.remove(`flows/${flow}/${file}`);
    } else if (roll < 0.47) {
      renameSync(join(flowsDir, flow, file), join(flowsDir, flow, `renamed-${edit}.yaml`));
    } else {
      tree.write(`flows/${flow}/${file}`, `edit ${edit} of ${file}\n`);
    }
    await between(edit);
  }
}
