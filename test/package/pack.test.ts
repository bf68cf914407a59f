/**
 * What ships: the build (`npm run build`), the npm package (`npm pack`, then `npm install -g` into an empty prefix)
 * and the desktop package's contents (electron-builder.yml's `files`), each run as a user would run it.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import {
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  symlinkSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join, matchesGlob, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { request } from '../support/loopback.ts';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { connectToBridge } from '../../src/window/index.ts';
import { startAgentProcess, userEnv, type AgentProcess } from '../support/agent-process.ts';
import { packagesLoadedBy, runFlowsync } from '../support/cli.ts';
import { eventually, makeRepo, serviceTree, type TestRepo } from '../support/repo.ts';
import { readDatabase, startTestService, type TestService } from '../support/service.ts';
import { startServeProcess, type ServeProcess } from '../support/serve-process.ts';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const NODE_MODULES = join(ROOT, 'node_modules');

/** Not part of what a checkout holds: installed, built, or left by tools. */
const NOT_IN_A_CHECKOUT = new Set(['node_modules', 'dist', '.git', 'coverage', '.scratch', 'results']);

let work: string;
/** A copy of the checkout with its build, as `npm pack` and electron-builder see one after `npm ci`. */
let checkout: string;

beforeAll(() => {
  work = mkdtempSync(join(tmpdir(), 'flowsync-package-'));
  checkout = join(work, 'checkout');
  // A copy, so that the window tests rebuilding renderer/dist at the same time cannot change what is packed.
  cpSync(ROOT, checkout, {
    recursive: true,
    filter: (source) => !NOT_IN_A_CHECKOUT.has(relative(ROOT, source).split('/').at(-1)!),
  });
  execFileSync(process.execPath, [join(ROOT, 'scripts/build.mjs'), join(checkout, 'dist')], {
    stdio: 'inherit',
  });
  // The window as `npm run build:renderer` builds it, out of vitest's NODE_ENV=test.
  const outDir = join(checkout, 'renderer/dist');
  execFileSync(
    process.execPath,
    [
      join(NODE_MODULES, 'vite/bin/vite.js'),
      'build',
      'renderer',
      '--outDir',
      outDir,
      '--emptyOutDir',
      '--logLevel',
      'warn',
    ],
    { cwd: ROOT, env: { ...process.env, NODE_ENV: 'production' }, stdio: 'inherit' },
  );
}, 180_000);
afterAll(() => rmSync(work, { recursive: true, force: true }));

let repo: TestRepo;
const processes: AgentProcess[] = [];
const servers: ServeProcess[] = [];
afterEach(async () => {
  for (const agent of processes.splice(0)) {
    agent.signal('SIGKILL');
    await agent.exited;
  }
  for (const server of servers.splice(0)) await server.stop();
  repo?.cleanup();
});

describe('the build (dist/bin/flowsync.js)', () => {
  let svc: TestService;
  afterEach(async () => {
    await svc?.close();
  });

  it('is the same command as the sources: the same help, and it syncs, watches and serves the window', async () => {
    const built = join(checkout, 'dist/bin/flowsync.js');
    // The built files import their dependencies from node_modules, as an installed package does.
    symlinkSync(NODE_MODULES, join(checkout, 'node_modules'));
    try {
      for (const args of [['--help'], ['start', '--help'], ['--version']]) {
        const fromBuild = execFileSync(process.execPath, [built, ...args], { encoding: 'utf8' });
        expect(fromBuild).toBe((await runFlowsync(args)).stdout);
      }
      // Each command bundles only what it uses: `status` reads SQLite without the service or the keychain.
      const status = packagesLoadedBy(built, ['status'], userEnv(join(work, 'status-home')));
      expect(status).toContain('better-sqlite3');
      for (const heavy of ['fastify', 'keytar', 'undici', 'pino']) expect(status).not.toContain(heavy);

      svc = await startTestService();
      repo = makeRepo({ 'flows/hello/main.yaml': 'hello\n' });
      const env = userEnv(join(repo.dir, 'home'), svc);
      const agent = startAgentProcess(['start', repo.root], env, built);
      processes.push(agent);
      await agent.waitFor(/Watching 1 repository/, 30_000);
      expect(serviceTree(svc.read, 'local', 'repo')).toEqual({ 'flows/hello/main.yaml': 'hello\n' });
      // A change is hashed and sent by the built code.
      repo.write('flows/hello/main.yaml', 'hello again\n');
      await eventually(() =>
        expect(serviceTree(svc.read, 'local', 'repo')).toEqual({ 'flows/hello/main.yaml': 'hello again\n' }),
      );
      // And the window is found from the built layout (renderer/dist beside dist/).
      const address = /Window: (\S+)/.exec(agent.output())![1]!;
      const page = await request(new URL(address).origin + '/');
      expect(page.statusCode).toBe(200);
      expect(await page.body.text()).toMatch(/<div id="root">/);
      agent.signal('SIGINT');
      expect(await agent.exitWithin()).toBe(0);
    } finally {
      rmSync(join(checkout, 'node_modules'));
    }
  });
});

describe('the npm package', () => {
  it('holds the build, the window, README and LICENSE, and no sources, tests or benchmarks', () => {
    const [packed] = JSON.parse(
      execFileSync('npm', ['pack', '--dry-run', '--json', '--ignore-scripts'], {
        cwd: checkout,
        encoding: 'utf8',
        stdio: ['ignore', 'pipe', 'ignore'],
      }),
    ) as { files: { path: string }[] }[];
    const files = packed!.files.map((file) => file.path);
    for (const path of [
      'package.json',
      'README.md',
      'LICENSE',
      'bin/flowsync.js',
      'dist/bin/flowsync.js',
      'dist/bin/flowsync.js.map',
      'renderer/dist/index.html',
    ]) {
      expect(files).toContain(path);
    }
    // Nothing else beside the two built folders.
    expect(files.filter((path) => !/^(dist\/bin|renderer\/dist)\//.test(path)).sort()).toEqual([
      'LICENSE',
      'README.md',
      'bin/flowsync.js',
      'package.json',
    ]);
    expect(files.filter((path) => /^(src|test|bench|electron|scripts|docs)\/|\.tsx?$/.test(path))).toEqual(
      [],
    );
  });

  it('installs into an empty prefix with production dependencies only, and that flowsync serves and syncs', async () => {
    const tarball = packTarball();
    const prefix = join(work, 'prefix');
    const started = Date.now();
    execFileSync(
      'npm',
      [
        'install',
        '-g',
        '--prefix',
        prefix,
        tarball,
        '--cache',
        join(work, 'npm-cache'),
        '--no-audit',
        '--no-fund',
      ],
      { cwd: work, env: { ...process.env, ...localPrebuilds() }, stdio: ['ignore', 'ignore', 'pipe'] },
    );
    console.log(`npm install -g of the package: ${((Date.now() - started) / 1000).toFixed(1)} s`);
    const installed = join(prefix, 'lib/node_modules/flowsync');
    const dependencies = readdirSync(join(installed, 'node_modules'));
    expect(dependencies).toEqual(expect.arrayContaining(['better-sqlite3', 'fastify', 'commander']));
    for (const dev of ['tsx', 'vitest', 'typescript', 'rolldown', 'electron'])
      expect(dependencies).not.toContain(dev);
    expect(existsSync(join(installed, 'src'))).toBe(false);

    const bin = join(prefix, 'bin/flowsync');
    repo = makeRepo({ 'flows/hello/main.yaml': 'hello\n', 'flows/hello/steps/one.yaml': 'one\n' });
    const dbPath = join(repo.dir, 'service.db');
    const server = await startServeProcess(dbPath, join(repo.dir, 'service.log'), [], bin);
    servers.push(server);
    const env = userEnv(join(repo.dir, 'home'), server);
    const agent = startAgentProcess(['start', repo.root], env, bin);
    processes.push(agent);
    await agent.waitFor(/Watching 1 repository/, 30_000);
    expect(serviceTree(readDatabase(dbPath), 'local', 'repo')).toEqual({
      'flows/hello/main.yaml': 'hello\n',
      'flows/hello/steps/one.yaml': 'one\n',
    });
  }, 240_000); // npm fetches about 100 packages from the registry: seconds here, more on a busy machine
});

describe('the desktop package', () => {
  let svc: TestService;
  afterEach(async () => {
    await svc?.close();
  });

  it("stages electron-builder.yml's files with production dependencies, and runs the agent and its bridge", async () => {
    const staging = join(work, 'desktop');
    const globs = builderFiles(readFileSync(join(checkout, 'electron-builder.yml'), 'utf8'));
    for (const path of walk(checkout)) {
      if (matches(path, globs)) cpSync(join(checkout, path), join(staging, path));
    }
    for (const folder of productionDependencies()) {
      cpSync(join(ROOT, folder), join(staging, folder), { recursive: true, dereference: true });
    }
    const staged = walk(staging).filter((path) => !path.startsWith('node_modules/'));
    expect(staged.filter((path) => /\.tsx?$|^(src|test|bench|bin)\//.test(path))).toEqual([]);
    expect(staged).toEqual(
      expect.arrayContaining([
        'package.json',
        'dist/bin/flowsync.js',
        'dist/electron/main.js',
        'dist/electron/preload.cjs',
        'renderer/dist/index.html',
      ]),
    );
    expect(existsSync(join(staging, 'node_modules/tsx'))).toBe(false);

    svc = await startTestService();
    repo = makeRepo({ 'flows/hello/main.yaml': 'hello\n' });
    const env = userEnv(join(repo.dir, 'home'), svc);
    const agent = startAgentProcess(['ui'], env, join(staging, 'dist/bin/flowsync.js'));
    processes.push(agent);
    await agent.waitFor(/Window: \S+/, 30_000);
    const address = /Window: (\S+)/.exec(agent.output())![1]!;
    const page = await request(new URL(address).origin + '/');
    expect(await page.body.text()).toMatch(/<div id="root">/);
    // The agent's own address, with the agent token, is in its lock (stdout, a pipe here, shows no token).
    const lock = readFileSync(join(env.XDG_DATA_HOME!, 'flowsync', 'agent.lock'), 'utf8');
    const bridge = connectToBridge((JSON.parse(lock) as { bridge: string }).bridge);
    await bridge.call('addRepository', { path: repo.root });
    await eventually(() =>
      expect(serviceTree(svc.read, 'local', 'repo')).toEqual({ 'flows/hello/main.yaml': 'hello\n' }),
    );
  });
});

function packTarball(): string {
  const out = join(work, 'tarball');
  mkdirSync(out, { recursive: true });
  execFileSync('npm', ['pack', '--ignore-scripts', '--pack-destination', out], {
    cwd: checkout,
    stdio: ['ignore', 'ignore', 'ignore'],
  });
  return join(
    out,
    readdirSync(out).find((name) => name.endsWith('.tgz'))!,
  );
}

/**
 * keytar from this checkout's own build (the same version, for this Node), handed to its installer,
 * prebuild-install, as a local prebuilt binary: the way a company mirror serves it. Without it the install
 * downloads a binary from GitHub (not reachable on the build machines) or compiles it. better-sqlite3 13 needs
 * none: its Node-API binaries are inside the package from the registry.
 */
function localPrebuilds(): NodeJS.ProcessEnv {
  const folder = join(work, 'prebuilds');
  mkdirSync(folder, { recursive: true });
  const pkg = JSON.parse(readFileSync(join(NODE_MODULES, 'keytar', 'package.json'), 'utf8')) as {
    version: string;
    binary: { napi_versions: number[] };
  };
  const abi = `napi-v${Math.max(...pkg.binary.napi_versions)}`;
  const file = join(folder, `keytar-v${pkg.version}-${abi}-${process.platform}-${process.arch}.tar.gz`);
  // Only the module itself, as in a published prebuild (prebuild-install loads each .node file it unpacks).
  const tar = spawnSync('tar', ['-czf', file, 'build/Release/keytar.node'], {
    cwd: join(NODE_MODULES, 'keytar'),
  });
  if (tar.status !== 0) throw new Error(`tar failed: ${tar.stderr}`);
  return { npm_config_keytar_local_prebuilds: folder };
}

/** The `files:` list of electron-builder.yml: one glob a line, `!` excludes. */
function builderFiles(yaml: string): string[] {
  const block = /^files:\n((?:\s+- .*\n)+)/m.exec(yaml);
  if (!block) throw new Error('electron-builder.yml has no files: list');
  return block[1]!
    .split('\n')
    .filter(Boolean)
    .map((line) => line.replace(/^\s+- /, '').replace(/^'(.*)'$/, '$1'));
}

/**
 * A path against electron-builder's globs, the last match winning. Node's own `path.matchesGlob` (minimatch's rules,
 * as electron-builder's; experimental on Node 20, no warning on 24) in place of a hand-made glob-to-regex.
 */
function matches(path: string, globs: string[]): boolean {
  let included = false;
  for (const glob of globs) {
    const negated = glob.startsWith('!');
    if (matchesGlob(path, negated ? glob.slice(1) : glob)) included = !negated;
  }
  return included;
}

/** Every file below `root`, relative, without node_modules (which electron-builder adds by itself). */
function walk(root: string, folder = ''): string[] {
  return readdirSync(join(root, folder), { withFileTypes: true }).flatMap((entry) => {
    const path = folder ? `${folder}/${entry.name}` : entry.name;
    if (entry.isDirectory()) return folder === '' && entry.name === 'node_modules' ? [] : walk(root, path);
    return [path];
  });
}

/**
 * node_modules folders of the production dependencies: the lockfile's packages not marked dev (or dev-optional),
 * which is what `npm ci --omit=dev` installs and what electron-builder copies.
 */
function productionDependencies(): string[] {
  const lock = JSON.parse(readFileSync(join(ROOT, 'package-lock.json'), 'utf8')) as {
    packages: Record<string, { dev?: boolean; devOptional?: boolean }>;
  };
  return Object.entries(lock.packages)
    .filter(([path, entry]) => path.startsWith('node_modules/') && !entry.dev && !entry.devOptional)
    .map(([path]) => path)
    .filter((path) => existsSync(join(ROOT, path)));
}
