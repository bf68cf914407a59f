/**
 * How fast the built `flowsync` starts: whole processes, as a shell runs them, next to a bare `node -e 0`.
 * Run: npm run bench -- cli   (builds dist/ first, as `npm run build` does)
 */
import { execFileSync, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { printTable, type BenchRow } from './report.ts';
import { userEnv } from '../test/support/agent-process.ts';
import { makeRepo } from '../test/support/repo.ts';
import { startServeProcess } from '../test/support/serve-process.ts';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const BUILT = join(ROOT, 'dist/bin/flowsync.js');
const SOURCES = join(ROOT, 'bin/flowsync.js');
const RUNS = 20;
/** GNU time reports the peak RSS of the whole process (`apt-get install time`). */
const GNU_TIME = '/usr/bin/time';

interface Sample {
  ms: number;
  peakMb: number;
}

/** One run: wall time from spawn to exit, and the peak RSS (GNU time's %M, else Node's own maxRSS at exit). */
function runOnce(args: string[], env: NodeJS.ProcessEnv, dir: string): Promise<Sample> {
  const rssFile = join(dir, 'rss');
  rmSync(rssFile, { force: true });
  const [program, programArgs] = existsSync(GNU_TIME)
    ? [GNU_TIME, ['-f', '%M', '-o', rssFile, process.execPath, ...args]]
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
      const kb = Number(readFileSync(rssFile, 'utf8').trim().split('\n').at(-1));
      resolve({ ms, peakMb: kb / 1024 });
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
    "process.on('exit', () => require('node:fs').writeFileSync(process.env.RSS_FILE, String(process.resourceUsage().maxRSS)));\n",
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
    const commands: { label: string; args: string[]; ms: number | null }[] = [
      { label: '`node -e 0`', args: ['-e', '0'], ms: null },
      { label: '`flowsync --version`', args: [BUILT, '--version'], ms: 120 },
      { label: '`flowsync --help`', args: [BUILT, '--help'], ms: 120 },
      { label: '`flowsync status` (one repository)', args: [BUILT, 'status'], ms: 150 },
      // For comparison: what a clone runs, the sources through tsx (bin/flowsync.js).
      { label: '`flowsync --version` from the sources (tsx)', args: [SOURCES, '--version'], ms: null },
    ];
    const samples = commands.map(() => [] as Sample[]);
    // Round-robin, so that a busy moment on the machine weighs on every command alike.
    for (let run = 0; run < RUNS + 1; run++) {
      for (const [index, command] of commands.entries()) {
        const sample = await runOnce(command.args, env, dir);
        if (run > 0) samples[index]!.push(sample); // the first round warms the file cache
      }
    }
    const how = existsSync(GNU_TIME) ? 'GNU time' : "Node's maxRSS at exit";
    return commands.flatMap((command, index) => {
      const ms = median(samples[index]!.map((s) => s.ms));
      const mb = median(samples[index]!.map((s) => s.peakMb));
      return [
        {
          metric: `${command.label}: wall time, median of ${RUNS}`,
          value: `${ms.toFixed(0)} ms`,
          target: command.ms === null ? '' : `≤ ${command.ms} ms`,
          met: command.ms === null ? null : ms <= command.ms,
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

if (import.meta.url === pathToFileURL(process.argv[1]!).href) {
  printTable('cli (bench/cli.ts)', await runCliBench());
}
