// `npm run build`: compiles the CLI and the desktop shell's main process into dist/ (the renderer is Vite's, in
// renderer/dist). Plain JavaScript, so that it runs on a fresh `npm ci` before anything is compiled.
//
//   dist/bin/flowsync.js      the `flowsync` command; each command's code in a chunk beside it, loaded when it runs
//   dist/electron/main.js     Electron's main process, with preload.cjs and resources/ beside it
//
// Every chunk sits two folders below the package root, as every source file in src/<layer>/ does, so a path found
// from a module's own location (src/host/paths.ts: the window's renderer/dist) is the same in both.
//
// Rolldown (Vite's bundler) rather than tsc or esbuild: both of those split at the file level, so `flowsync status`,
// which imports one function through src/agent/index.ts, would load the whole agent (the service, fastify, the
// sync engine): 0.27 s of CPU and 78 MB instead of 0.08 s and 51 MB (bench/cli.ts has the current numbers).
// Dependencies stay in node_modules, as installed: the package and the desktop app ship them anyway, and native
// modules (better-sqlite3, keytar) cannot be bundled. zod is the exception: imported from node_modules, its index
// loads 120 modules, all 40 locales among them, and `flowsync status` peaked at 59 MB; bundled, only what our schemas
// use is kept and status peaks at 54 MB (bench/cli.ts, target 60 MB).
import { cpSync, rmSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { rolldown } from 'rolldown';
import { writeStamp } from './build-stamp.mjs';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
// `node scripts/build.mjs <folder>` builds into another folder (test/package stages the package with it).
const DIST = process.argv[2] ? resolve(process.argv[2]) : join(ROOT, 'dist');

// Dependencies compiled into our chunks (see above).
const BUNDLED = /^zod(\/|$)/;
const bundles = [
  { folder: 'bin', input: { flowsync: 'src/cli/main.ts' }, plugins: () => [nodeModulesAsGiven()] },
  { folder: 'electron', input: { main: 'electron/main.ts' }, plugins: () => [] },
];

/**
 * Whether an export of a Node module can be a function that loads the module when first called: a plain function
 * (lower-case: no class to extend or construct) with nothing on it (`execFile`'s promisified form is a symbol
 * property, which `promisify` reads). The module is then loaded by the first call, not by the chunk that names it:
 * `node:crypto` (6 ms of CPU), `node:child_process` and `node:net` were loaded by every `flowsync status` through
 * chunks it shares with the calls that use them.
 */
const PLAIN = new Set(['length', 'name', 'prototype']);
function lazyCall(value, key) {
  return (
    typeof value === 'function' && /^[a-z]/.test(key) && Reflect.ownKeys(value).every((own) => PLAIN.has(own))
  );
}

/**
 * Node's own modules (`node:fs`…) taken as Node gives them to CommonJS, by process.getBuiltinModule, not through an
 * ESM import: importing one makes its ESM facade, which reads every export it has, and `node:fs`'s ReadStream
 * getter loads Node's file streams (6 million instructions for node:fs alone, 1-2 for the others; `flowsync
 * status` imports ten of them, issue 50). Each name our code imports is one pure read of the module, dropped when
 * nothing uses it. The CLI's bundle only: it runs on Node 22.12+ (which has getBuiltinModule) or in Electron's.
 */
function nodeModulesAsGiven() {
  const PREFIX = '\0builtin:';
  return {
    name: 'node-modules-as-given',
    resolveId(id) {
      return id.startsWith('node:') ? { id: `${PREFIX}${id}`, moduleSideEffects: false } : null;
    },
    async load(id) {
      if (!id.startsWith(PREFIX)) return null;
      const name = id.slice(PREFIX.length);
      const module = await import(name);
      const names = Object.keys(module).filter((key) => key !== 'default' && /^[A-Za-z_][\w]*$/.test(key));
      return [
        'let $module;',
        `const $given = () => ($module ??= process.getBuiltinModule(${JSON.stringify(name)}));`,
        'const $read = /* @__NO_SIDE_EFFECTS__ */ (key) => $given()[key];',
        'export default /* @__PURE__ */ $given();',
        ...names.map((key) =>
          lazyCall(module[key], key)
            ? `export function ${key}(...args) { return $given().${key}(...args); }`
            : `export const ${key} = /* @__PURE__ */ $read(${JSON.stringify(key)});`,
        ),
      ].join('\n');
    },
  };
}

// The stamp is dated when the build starts: a source saved during the build makes it stale (scripts/build-stamp.mjs).
const started = Date.now();
for (const { folder, input, plugins } of bundles) {
  // Only our own folders: dist/desktop is electron-builder's.
  rmSync(join(DIST, folder), { recursive: true, force: true });
  const bundle = await rolldown({
    cwd: ROOT,
    input,
    platform: 'node',
    plugins: plugins(),
    // Everything that is not our own file comes from node_modules (or is Node's, or Electron itself).
    external: (id) =>
      !BUNDLED.test(id) &&
      !(plugins().length > 0 && id.startsWith('node:')) &&
      !id.startsWith('.') &&
      !id.startsWith('/') &&
      !/^[A-Za-z]:[\\/]/.test(id),
    // Our modules only define things on import, so a command gets only what it uses, not every module
    // a folder's index.ts re-exports.
    treeshake: { moduleSideEffects: (id, external) => external || !id.startsWith(ROOT) },
    logLevel: 'warn',
    // Entries may export more than their sources do: what the agent-log group below needs (said, not implied).
    preserveEntrySignatures: 'allow-extension',
  });
  await bundle.write({
    dir: join(DIST, folder),
    format: 'esm',
    // The maps carry the sources: a stack trace from an installed package points into src/ without shipping it.
    sourcemap: true,
    entryFileNames: '[name].js',
    chunkFileNames: '[name]-[hash].js',
    // The agent's log (pino) in a chunk of its own: rolldown otherwise merged the whole host layer into one chunk,
    // and `flowsync status`, which needs only its paths and lock, loaded pino with it (the package test forbids it).
    codeSplitting: {
      includeDependenciesRecursively: false,
      groups: [
        { name: 'agent-log', test: /[\\/]src[\\/]host[\\/]agent-log\.ts$/ },
        // The service in chunks of its own, but for the small modules others take from it (its errors, the
        // connection limits the window's bridge shares): rolldown merged those and the whole service into one chunk,
        // so `flowsync start` with a service of its own loaded the service, its database drivers (pg) and routes.
        // The window (its contract's schemas, its bridge's server and fastify) in a chunk of its own: rolldown merged
        // into it the sync modules it shares with the agent (reconcile, the service side), so the agent's chunk
        // imported it, and `flowsync status`'s look at the service with no agent running loaded fastify and the
        // window's 350 schemas with the agent (issue 50).
        { name: 'window', test: /[\\/]src[\\/]window[\\/]/ },
        {
          name: 'service',
          test: /[\\/]src[\\/]service[\\/](?!errors\.ts$|http[\\/]connection-limits\.ts$)/,
        },
      ],
    },
  });
  await bundle.close();
}

// The sandboxed preload is plain CommonJS already (it may require only 'electron'); and the tray icon.
cpSync(join(ROOT, 'electron/preload.cjs'), join(DIST, 'electron/preload.cjs'));
cpSync(join(ROOT, 'electron/resources'), join(DIST, 'electron/resources'), { recursive: true });

// Last, so that a build that failed half-way leaves no stamp: bin/flowsync.js then runs the sources.
writeStamp(join(DIST, 'bin'), started);
