/**
 * How fast `flowsync` starts: whole processes, as a shell runs them, next to a bare `node -e 0`. `status` three ways:
 * as the installed package runs it, as the README's set-up runs it (the clone's bin/flowsync.js, linked onto PATH by
 * `npm link`, with the build `npm ci` made), and from the sources through tsx (the clone after an edit).
 * Run: npm run bench -- cli   (builds dist/ first, as `npm run build` does)
 */
import { execFileSync, spawn } from 'node:child_process';
import {
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { printTable, type BenchRow } from './report.ts';
import { userEnv } from '../test/support/agent-process.ts';
import { makeRepo } from '../test/support/repo.ts';
import { startServeProcess } from '../test/support/serve-process.ts';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const BUILT = join(ROOT, 'dist/bin/flowsync.js');
/** The clone's command: what `npm link` puts on PATH in the README's set-up. */
const CHECKOUT = join(ROOT, 'bin/flowsync.js');
const RUNS = 20;
/** Through tsx each run costs seconds: fewer of them keep the bench under a minute. */
const SOURCE_RUNS = 5;
/** GNU time reports the peak RSS of the whole process (`apt-get install time`). */
const GNU_TIME = '/usr/bin/time';

interface Sample {
  ms: number;
  peakMb: number;
  /** User and system CPU time of the whole process. */
  cpuMs: number;
}

/** One run: wall time from spawn to exit, and the peak RSS (GNU time's %M, else Node's own maxRSS at exit). */
function runOnce(args: string[], env: NodeJS.ProcessEnv, dir: string): Promise<Sample> {
  const rssFile = join(dir, 'rss');
  rmSync(rssFile, { force: true });
  const [program, programArgs] = existsSync(GNU_TIME)
    ? [GNU_TIME, ['-f', '%M %U %S', '-o', rssFile, process.execPath, ...args]]
    : [process.execPath, ['--require', join(dir, 'rss.cjs'), ...args]];
  return new Promise((resolve, reject) => {
    const started = performance.now();
    const child = spawn(program, programArgs, {
      env: { ...withoutExtraCerts(process.env), ...env, RSS_FILE: rssFile },
      stdio: 'ignore',
    });
    child.on('error', reject);
    child.on('close', (code) => {
      const ms = performance.now() - started;
      if (code !== 0) return reject(new Error(`node ${args.join(' ')} exited with ${code}`));
      const [kb, user, system] = readFileSync(rssFile, 'utf8')
        .trim()
        .split('\n')
        .at(-1)!
        .split(' ')
        .map(Number);
      resolve({ ms, peakMb: kb! / 1024, cpuMs: (user! + system!) * 1000 });
    });
  });
}

/**
 * NODE_EXTRA_CA_CERTS makes every Node process read and parse that bundle as it starts: 50 ms on the machine that
 * printed the README's table (`node -e 0` 80 ms with it, 30 ms without), whatever the program. Some sandboxes set
 * it; a user's shell seldom does. The bench measures without it, for `node -e 0` alike, and says when it was set.
 */
const EXTRA_CERTS_SET = Boolean(process.env.NODE_EXTRA_CA_CERTS);
function withoutExtraCerts(env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  const copy = { ...env };
  delete copy.NODE_EXTRA_CA_CERTS;
  return copy;
}

const median = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)]!;
};

export async function runCliBench(): Promise<BenchRow[]> {
  execFileSync(process.execPath, [join(ROOT, 'scripts/build.mjs')], { stdio: 'inherit' });
  if (EXTRA_CERTS_SET)
    console.error(
      'NODE_EXTRA_CA_CERTS is set here: the measured processes run without it (see withoutExtraCerts).',
    );
  const dir = mkdtempSync(join(tmpdir(), 'flowsync-bench-cli-'));
  const home = join(dir, 'home');
  // Without GNU time: each run reports its own peak RSS as it exits (the whole run but Node's exit itself).
  writeFileSync(
    join(dir, 'rss.cjs'),
    "process.on('exit', () => { const u = process.resourceUsage(); require('node:fs').writeFileSync(process.env.RSS_FILE, `${u.maxRSS} ${u.userCPUTime / 1e6} ${u.systemCPUTime / 1e6}`); });\n",
  );
  const env = userEnv(home);
  // `status` reads a real state file: one repository, synced once with a real service.
  const service = await startServeProcess(join(dir, 'service.db'), join(dir, 'service.log'));
  const repo = makeRepo({ 'flows/hello/main.yaml': 'hello\n', 'flows/hello/logo.png': Buffer.from([0, 1]) });
  try {
    execFileSync(process.execPath, [BUILT, 'sync', repo.root], {
      env: { ...process.env, ...userEnv(home, service) },
      stdio: 'ignore',
    });
    const installed = installedPackage(dir);
    const fromSources = { FLOWSYNC_FROM_SOURCES: '1' };
    const commands: {
      label: string;
      args: string[];
      ms: number | null;
      runs?: number;
      env?: NodeJS.ProcessEnv;
    }[] = [
      { label: '`node -e 0`', args: ['-e', '0'], ms: null },
      { label: '`flowsync --version`', args: [BUILT, '--version'], ms: 120 },
      { label: '`flowsync --help`', args: [BUILT, '--help'], ms: 120 },
      { label: '`flowsync status` (one repository)', args: [BUILT, 'status'], ms: 150 },
      { label: '`flowsync status`, the installed package', args: [installed, 'status'], ms: null },
      // The README's set-up: the clone's bin/flowsync.js (npm link), which runs dist/ while it is current.
      { label: '`flowsync status`, the README’s set-up (a clone)', args: [CHECKOUT, 'status'], ms: null },
      {
        label: '`flowsync status`, a clone after an edit (tsx)',
        args: [CHECKOUT, 'status'],
        ms: null,
        runs: SOURCE_RUNS,
        env: fromSources,
      },
    ];
    const samples = commands.map(() => [] as Sample[]);
    // Round-robin, so that a busy moment on the machine weighs on every command alike.
    for (let run = 0; run < RUNS + 1; run++) {
      for (const [index, command] of commands.entries()) {
        if (run > (command.runs ?? RUNS)) continue;
        const sample = await runOnce(command.args, { ...env, ...command.env }, dir);
        if (run > 0) samples[index]!.push(sample); // the first round warms the file cache
      }
    }
    const how = existsSync(GNU_TIME) ? 'GNU time' : "Node's maxRSS at exit";
    return commands.flatMap((command, index) => {
      const ms = median(samples[index]!.map((s) => s.ms));
      const runs = samples[index]!.length;
      const mb = median(samples[index]!.map((s) => s.peakMb));
      return [
        {
          metric: `${command.label}: wall time, median of ${runs}`,
          value: `${ms.toFixed(0)} ms`,
          target: command.ms === null ? '' : `≤ ${command.ms} ms`,
          met: command.ms === null ? null : ms <= command.ms,
        },
        {
          metric: `${command.label}: CPU (user + system), median of ${samples[index]!.length}`,
          value: `${median(samples[index]!.map((s) => s.cpuMs)).toFixed(0)} ms`,
          // The README's set-up costs what the installed package costs (issue 42): within 20 %, or 20 ms.
          target: command.args[0] === CHECKOUT && !command.env ? '≤ the installed package’s' : '',
          met:
            command.args[0] === CHECKOUT && !command.env
              ? median(samples[index]!.map((s) => s.cpuMs)) <=
                Math.max(
                  installedCpu(samples, commands, installed) * 1.2,
                  installedCpu(samples, commands, installed) + 20,
                )
              : null,
        },
        {
          metric: `${command.label}: peak RSS (${how}), median`,
          value: `${mb.toFixed(0)} MB`,
          target: command.ms === null ? '' : '≤ 60 MB',
          met: command.ms === null ? null : mb <= 60,
        },
      ];
    });
  } finally {
    await service.stop();
    repo.cleanup();
    rmSync(dir, { recursive: true, force: true });
  }
}

/**
 * The installed package's layout, made here without the registry: what `npm install -g` puts in
 * lib/node_modules/flowsync (bin/flowsync.js and dist/bin, no sources, `files` in package.json) with the clone's
 * node_modules beside it. Its bin/flowsync.js finds no src/ and runs dist/ at once, as an installed one does.
 */
function installedPackage(dir: string): string {
  const folder = join(dir, 'installed');
  mkdirSync(join(folder, 'bin'), { recursive: true });
  cpSync(CHECKOUT, join(folder, 'bin/flowsync.js'));
  cpSync(join(ROOT, 'dist/bin'), join(folder, 'dist/bin'), { recursive: true });
  cpSync(join(ROOT, 'package.json'), join(folder, 'package.json'));
  symlinkSync(join(ROOT, 'node_modules'), join(folder, 'node_modules'));
  return join(folder, 'bin/flowsync.js');
}

function installedCpu(samples: Sample[][], commands: { args: string[] }[], installed: string): number {
  const index = commands.findIndex((command) => command.args[0] === installed);
  return median(samples[index]!.map((s) => s.cpuMs));
}

if (import.meta.url === pathToFileURL(process.argv[1]!).href) {
  printTable('cli (bench/cli.ts)', await runCliBench());
}
