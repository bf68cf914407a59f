// `npm run lint` runs this: no import cycle among our modules (src/, electron/, renderer/src/), type-only imports
// included. ESLint's import/no-cycle would need eslint-plugin-import and its resolver for this one rule; a cycle
// is a graph question, and the graph is our own relative imports.
import { readFileSync, readdirSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const FOLDERS = ['src', 'electron', 'renderer/src'];
const SOURCE = /\.(ts|tsx|mts|mjs)$/;
// `import … from './x.ts'`, `export … from './x.ts'`, `import('./x.ts')`; not inside comments' prose.
const IMPORT =
  /(?:^|\n)\s*(?:import|export)\s[^'"]*?from\s*['"](\.{1,2}\/[^'"]+)['"]|import\(\s*['"](\.{1,2}\/[^'"]+)['"]\s*\)/g;

function filesIn(folder) {
  return readdirSync(folder).flatMap((name) => {
    const path = join(folder, name);
    if (statSync(path).isDirectory()) return name === 'dist' || name === 'node_modules' ? [] : filesIn(path);
    return SOURCE.test(name) && !name.endsWith('.d.mts') ? [path] : [];
  });
}

const files = FOLDERS.flatMap((folder) => filesIn(join(ROOT, folder)));
const graph = new Map(
  files.map((file) => {
    const text = readFileSync(file, 'utf8');
    return [file, [...text.matchAll(IMPORT)].map((match) => resolve(dirname(file), match[1] ?? match[2]))];
  }),
);

// Tarjan's strongly connected components: any component of more than one module is a cycle.
let index = 0;
const indexes = new Map();
const low = new Map();
const stack = [];
const onStack = new Set();
const cycles = [];
function visit(node) {
  indexes.set(node, index);
  low.set(node, index++);
  stack.push(node);
  onStack.add(node);
  for (const next of graph.get(node) ?? []) {
    if (!graph.has(next)) continue;
    if (!indexes.has(next)) {
      visit(next);
      low.set(node, Math.min(low.get(node), low.get(next)));
    } else if (onStack.has(next)) low.set(node, Math.min(low.get(node), indexes.get(next)));
  }
  if (low.get(node) === indexes.get(node)) {
    const component = [];
    let member;
    do {
      member = stack.pop();
      onStack.delete(member);
      component.push(member);
    } while (member !== node);
    if (component.length > 1 || (graph.get(node) ?? []).includes(node)) cycles.push(component);
  }
}
for (const file of graph.keys()) if (!indexes.has(file)) visit(file);

if (cycles.length > 0) {
  for (const cycle of cycles)
    console.error(
      `import cycle: ${cycle
        .map((file) => relative(ROOT, file))
        .sort()
        .join(' <-> ')}`,
    );
  console.error('Break it: import the module that defines a name, not a door that re-exports the importer.');
  process.exit(1);
}
console.log(`no import cycle among ${graph.size} modules`);
