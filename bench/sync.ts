/**
 * The sync engine's numbers, against `flowsync serve` in its own process (as a remote service would be).
 * Run: npm run bench -- sync   (about three minutes: it builds trees of up to 100,000 files)
 */
import Database from 'better-sqlite3';
import { execFile, execFileSync, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import type { SyncReport } from '../src/sync/index.ts';
import { userEnv } from '../test/support/agent-process.ts';
import { FLOWSYNC_BIN } from '../test/support/cli.ts';
import { editStorm, flowFiles, seededRandom } from '../test/support/edit-storm.ts';
import { createEngine } from '../test/support/engine.ts';
import { twoBranches } from '../test/support/git.ts';
import { diskTree, makeRepo, serviceTree } from '../test/support/repo.ts';
import { startServeProcess, type ServeProcess } from '../test/support/serve-process.ts';
import { readDatabase } from '../test/support/service.ts';
import { percentile, printTable, type BenchRow } from './report.ts';

const run = promisify(execFile);

export function writeTree(root: string, flows: number, filesPerFlow: number, bytes: number, tag = ''): void {
  for (let f = 0; f < flows; f++) {
    const folder = join(root, 'flows', `flow-${f}`);
    mkdirSync(folder, { recursive: true });
    for (let i = 0; i < filesPerFlow; i++) {
      const body = randomBytes(Math.ceil(bytes * 0.75))
        .toString('base64')
        .slice(0, bytes - tag.length - 1);
      writeFileSync(join(folder, `step-${i}.yaml`), `${tag}${body}\n`);
    }
  }
}

function engineFor(root: string, dir: string, service: ServeProcess, name: string) {
  return createEngine({
    root,
    statePath: join(dir, `${name}.state.db`),
    url: service.url,
    userToken: service.tokens.user,
    owner: 'bench',
    name,
    // The deletions measured here would be held for their user (more than 100 at once): what is timed is sending them.
    deletionGuard: null,
  });
}

const seconds = (ms: number) => `${(ms / 1000).toFixed(2)} s`;

export async function initialSync(dir: string, service: ServeProcess): Promise<BenchRow[]> {
  const root = join(dir, 'initial');
  writeTree(root, 1000, 10, 10 * 1024);
  const sha256sum = () => {
    const start = performance.now();
    execFileSync('sh', ['-c', `find "${root}/flows" -type f -print0 | xargs -0 sha256sum > /dev/null`]);
    return performance.now() - start;
  };
  sha256sum(); // both sides read from a warm page cache
  const { engine, close } = engineFor(root, dir, service, 'initial');
  let hashedAt = 0;
  engine.on('progress', (progress) => {
    if (progress.stage === 'hashing' && progress.done === progress.total) hashedAt = performance.now();
  });
  const start = performance.now();
  const report = await engine.syncOnce();
  const total = performance.now() - start;
  await close();
  const baseline = sha256sum();
  const ratio = total / baseline;
  const scanAndHash = hashedAt - start;
  return [
    {
      metric: `initial sync, 10,000 files / 100 MB / 1,000 flows (${report.requests} requests)`,
      value: seconds(total),
      target: '',
      met: null,
    },
    {
      metric: '`find … | xargs sha256sum` over the same tree',
      value: seconds(baseline),
      target: '',
      met: null,
    },
    {
      metric: 'initial sync ÷ sha256sum',
      value: `${ratio.toFixed(2)}×`,
      target: '≤ 1.5×',
      met: ratio <= 1.5,
    },
    {
      metric: 'of which scan + hash on the agent (÷ sha256sum)',
      value: `${seconds(scanAndHash)} (${(scanAndHash / baseline).toFixed(2)}×)`,
      target: '',
      met: null,
    },
  ];
}

async function editLatency(dir: string, service: ServeProcess): Promise<BenchRow[]> {
  const root = join(dir, 'edits');
  writeTree(root, 50, 10, 1024);
  const { engine, close } = engineFor(root, dir, service, 'edits');
  await engine.start();
  const samples: number[] = [];
  for (let edit = 0; edit < 220; edit++) {
    const synced = new Promise<SyncReport>((resolve) => engine.once('synced', resolve));
    const start = performance.now();
    writeFileSync(join(root, 'flows', `flow-${edit % 50}`, `step-${edit % 10}.yaml`), `edit ${edit}\n`);
    await synced;
    if (edit >= 20) samples.push(performance.now() - start);
    await sleep(20);
  }
  await close();
  samples.sort((a, b) => a - b);
  const p50 = percentile(samples, 50);
  const p99 = percentile(samples, 99);
  return [
    {
      metric: 'edit → acknowledged, p50 (200 edits, 30 ms quiet period)',
      value: `${p50.toFixed(1)} ms`,
      target: '≤ 60 ms',
      met: p50 <= 60,
    },
    {
      metric: 'edit → acknowledged, p99',
      value: `${p99.toFixed(1)} ms`,
      target: '≤ 200 ms',
      met: p99 <= 200,
    },
  ];
}

async function gitCheckout(dir: string, service: ServeProcess, logPath: string): Promise<BenchRow[]> {
  const root = join(dir, 'git');
  writeTree(root, 250, 20, 512, 'main ');
  twoBranches(root, () => writeTree(root, 250, 20, 512, 'other '));

  const { engine, close } = engineFor(root, dir, service, 'git');
  await engine.start();
  // Measured on the service: converged when it holds all 5,000 files of the other branch; requests from its log.
  const db = new Database(join(dir, 'service.db'), { readonly: true });
  const onOtherBranch = db.prepare(
    `SELECT count(*) FROM flow_files ff JOIN flows f ON f.id = ff.flow_id JOIN repos r ON r.id = f.repo_id
     WHERE r.owner = 'bench' AND r.name = 'git' AND ff.content LIKE 'other %'`,
  );
  const uploads = () =>
    readFileSync(logPath, 'utf8')
      .split('\n')
      .filter((l) => l.includes('svc/flow_def/')).length;
  const before = uploads();
  const start = performance.now();
  // git in its own process, as a user runs it, while the agent (in this process) follows the events.
  const checkout = run('git', ['-C', root, 'checkout', '-q', 'other']);
  while ((onOtherBranch.pluck().get() as number) < 5000) await sleep(100);
  await checkout;
  const converged = performance.now() - start;
  await sleep(1000); // anything still in flight is counted too
  const requests = uploads() - before;
  db.close();
  await close();
  return [
    {
      metric: 'git checkout of 5,000 changed files: time to converge',
      value: seconds(converged),
      target: '≤ 3 s',
      met: converged <= 3000,
    },
    {
      metric: 'git checkout of 5,000 changed files: requests',
      value: String(requests),
      target: '≤ 30',
      met: requests <= 30,
    },
  ];
}

/** `flowsync start` as a user runs it, in its own process: restart time, then idle CPU and memory. */
async function largeRepository(dir: string, service: ServeProcess, logPath: string): Promise<BenchRow[]> {
  const root = join(dir, 'large');
  writeTree(root, 1000, 100, 64);
  const env = { ...process.env, ...userEnv(join(dir, 'home'), service) };
  const run = async () => {
    const child = spawn(process.execPath, [FLOWSYNC_BIN, 'start', root], {
      env,
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    let out = '';
    child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString('utf8')));
    const start = performance.now();
    let inSyncMs = 0;
    while (!out.includes('Watching 1 repository')) {
      if (child.exitCode !== null) throw new Error(`flowsync start exited: ${out}`);
      if (!inSyncMs && out.includes('in sync')) inSyncMs = performance.now() - start;
      await sleep(10);
    }
    return { child, inSyncMs, ms: performance.now() - start };
  };
  const stop = (child: ReturnType<typeof spawn>) =>
    new Promise<void>((done) => {
      child.once('close', () => done());
      child.kill('SIGINT');
    });

  const first = await run();
  await stop(first.child);
  const callsBefore = readFileSync(logPath, 'utf8').split('"msg":"call"').length;
  const second = await run();
  const calls = readFileSync(logPath, 'utf8').split('"msg":"call"').length - callsBefore;

  const pid = second.child.pid!;
  const cpuTicks = () => {
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
    return Number(fields[11]) + Number(fields[12]); // utime + stime, in clock ticks
  };
  const rssMb = () => Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))![1]) / 1024;
  await sleep(2000);
  const ticksBefore = cpuTicks();
  let rss = rssMb();
  let rssAtEnd = rss;
  const idleMs = 60_000;
  for (let waited = 0; waited < idleMs; waited += 1000) {
    await sleep(1000);
    rssAtEnd = rssMb();
    rss = Math.max(rss, rssAtEnd);
  }
  const clockTicksPerSecond = Number(execFileSync('getconf', ['CLK_TCK']).toString());
  const cpuPercent = ((cpuTicks() - ticksBefore) / clockTicksPerSecond / (idleMs / 1000)) * 100;
  await stop(second.child);
  return [
    {
      metric: 'initial sync of 100,000 files / 1,000 flows, from `flowsync start` to watching',
      value: seconds(first.ms),
      target: '',
      met: null,
    },
    {
      metric: 'restart with nothing changed, 100,000 files: in sync (incl. process start)',
      value: seconds(second.inSyncMs),
      target: '≤ 3 s',
      met: second.inSyncMs <= 3000,
    },
    {
      metric: 'restart: watching again (chokidar set up over 100,000 files)',
      value: seconds(second.ms),
      target: '',
      met: null,
    },
    {
      metric: 'restart: requests to the service / bytes uploaded',
      value: `${calls} / 0`,
      target: '0 bytes',
      met: calls === 0,
    },
    {
      metric: 'idle CPU over 60 s, 100,000 files watched',
      value: `${cpuPercent.toFixed(2)} %`,
      target: '< 1 %',
      met: cpuPercent < 1,
    },
    {
      metric: 'RSS, max over those 60 s (the start-up high-water mark)',
      value: `${Math.round(rss)} MB`,
      target: '≤ 200 MB',
      met: rss <= 200,
    },
    {
      metric: 'RSS at the end of those 60 s (steady)',
      value: `${Math.round(rssAtEnd)} MB`,
      target: '≤ 200 MB',
      met: rssAtEnd <= 200,
    },
  ];
}

/**
 * Mass deletions, file by file with the folders kept (`rm flows/*\/*`, `git rm`): while the engine watches, and
 * while it is stopped (sent by the next start's scan). Each deleted path used to test every row of the state
 * (10,485 files: 66 s, 58 s of CPU); now linear. Time until the service holds none of the files; the engine's
 * CPU (this process: the service runs in its own). Deleted while watching, more than the kernel queues (inotify's
 * max_queued_events, 16,384 by default) may be lost as events: only a rescan finds those.
 */
async function deletions(dir: string, service: ServeProcess, count: number): Promise<BenchRow[]> {
  const root = join(dir, `deletions-${count}`);
  const flows = count / 1000;
  writeTree(root, flows, 1000, 64);
  const files = () => {
    const read = new Database(join(dir, 'service.db'), { readonly: true });
    try {
      return read
        .prepare(
          `SELECT count(*) FROM flow_files ff JOIN flows f ON f.id = ff.flow_id JOIN repos r ON r.id = f.repo_id
           WHERE r.owner = 'bench' AND r.name = ?`,
        )
        .pluck()
        .get(`deletions-${count}`) as number;
    } finally {
      read.close();
    }
  };
  const removeAll = () => {
    for (let f = 0; f < flows; f++)
      for (let i = 0; i < 1000; i++) rmSync(join(root, 'flows', `flow-${f}`, `step-${i}.yaml`));
  };
  const converge = async (limitMs: number) => {
    const start = performance.now();
    const cpu = process.cpuUsage();
    while (files() > 0 && performance.now() - start < limitMs) await sleep(50);
    const used = process.cpuUsage(cpu);
    return { ms: performance.now() - start, cpuMs: (used.user + used.system) / 1000, left: files() };
  };
  const result = (what: string, run: { ms: number; cpuMs: number; left: number }): BenchRow => ({
    metric: `${count.toLocaleString('en')} files deleted ${what}: in sync (engine CPU)`,
    value:
      run.left === 0
        ? `${seconds(run.ms)} (${seconds(run.cpuMs)})`
        : `${run.left} left after ${seconds(run.ms)}`,
    target: '≤ 10 s',
    met: run.left === 0 && run.ms <= 10_000,
  });

  let engine = engineFor(root, dir, service, `deletions-${count}`);
  await engine.engine.start();
  removeAll();
  const watching = await converge(120_000);
  await engine.close();

  writeTree(root, flows, 1000, 64);
  engine = engineFor(root, dir, service, `deletions-${count}`);
  await engine.engine.start();
  await engine.close();
  removeAll();
  engine = engineFor(root, dir, service, `deletions-${count}`);
  const stopped = performance.now();
  const cpu = process.cpuUsage();
  await engine.engine.syncOnce();
  const used = process.cpuUsage(cpu);
  const atStart = { ms: performance.now() - stopped, cpuMs: (used.user + used.system) / 1000, left: files() };
  await engine.close();
  return [result('while watching', watching), result('while stopped, sent by the next start', atStart)];
}

/**
 * The service stopped for 15 s while 1,000 edits (folder renames among them) happen, then started again on the
 * same port: how long until it holds exactly what is on disk, from the moment it listens again.
 */
async function outage(dir: string): Promise<BenchRow[]> {
  const tree = makeRepo(flowFiles(100, 10));
  const dbPath = join(dir, 'outage.db');
  const logPath = join(dir, 'outage.log');
  const first = await startServeProcess(dbPath, logPath);
  const { engine, close } = createEngine({
    root: tree.root,
    statePath: join(dir, 'outage.state.db'),
    url: first.url,
    userToken: first.tokens.user,
    clientAttempts: 2,
    // The renames leave ~470 paths deleted, over the deletion guard's 100 (issue 24, after this row was first
    // measured): held, they waited for a user's yes and this loop never ended (30 min, on issue 40's rerun).
    // The catch-up is what is timed here; held deletions have their own tests.
    deletionGuard: null,
  });
  let second: ServeProcess | null = null;
  try {
    await engine.start();
    await first.stop();
    const outageEnds = performance.now() + 15_000;
    await editStorm(tree, 1000, seededRandom(15), async (edit) => {
      if (edit % 10 === 0) await sleep(100);
    });
    while (performance.now() < outageEnds) await sleep(50);
    second = await startServeProcess(dbPath, logPath, ['--port', String(first.port)]);
    const answering = performance.now();
    const disk = JSON.stringify(diskTree(tree.root));
    const read = readDatabase(dbPath);
    while (JSON.stringify(serviceTree(read, 'acme', 'app')) !== disk) await sleep(50);
    const catchUp = performance.now() - answering;
    return [
      {
        metric: 'catch-up after a 15 s outage (1,000 edits, folder renames), from the service answering',
        value: seconds(catchUp),
        target: '≤ 5 s',
        met: catchUp <= 5000,
      },
    ];
  } finally {
    await close();
    await second?.stop();
    tree.cleanup();
  }
}

/** This process's reads so far: bytes through read(2) (page cache included) and read calls (/proc/self/io). */
function processReads(): { bytes: number; calls: number } {
  const io = readFileSync('/proc/self/io', 'utf8');
  const field = (name: string) => Number(new RegExp(`^${name}: (\\d+)$`, 'm').exec(io)?.[1] ?? Number.NaN);
  return { bytes: field('rchar'), calls: field('syscr') };
}

/**
 * What the periodic verified rescan costs with nothing changed (issue 21): a scan of every flow root compared
 * with the state by mtime and size, then a round that finds nothing to send. Measured in this process (the
 * engine and its hash workers): wall time, CPU (user + system, all threads), bytes and calls through read(2).
 */
async function rescanCost(dir: string, service: ServeProcess): Promise<BenchRow[]> {
  const sizes = (process.env.FLOWSYNC_BENCH_RESCAN ?? '10000,100000').split(',').map(Number);
  const rows: BenchRow[] = [];
  for (const files of sizes) {
    const root = join(dir, `rescan-${files}`);
    writeTree(root, files / 100, 100, 200);
    const { engine, close } = engineFor(root, dir, service, `rescan-${files}`);
    try {
      await engine.syncOnce(); // the first sync: the state knows every file's mtime, size and hash
      const runs: { ms: number; cpuMs: number; bytes: number; calls: number; requests: number }[] = [];
      for (let run = 0; run < 3; run++) {
        const cpu = process.cpuUsage();
        const reads = processReads();
        const start = performance.now();
        const report = await engine.syncOnce();
        const ms = performance.now() - start;
        const used = process.cpuUsage(cpu);
        const after = processReads();
        runs.push({
          ms,
          cpuMs: (used.user + used.system) / 1000,
          bytes: after.bytes - reads.bytes,
          calls: after.calls - reads.calls,
          requests: report.requests,
        });
      }
      const median = runs.sort((a, b) => a.ms - b.ms)[1]!;
      const label = files.toLocaleString('en-US');
      // The check of the service alone (issue 24): one list_flows, the acknowledged files' aggregate per flow.
      const checks: { ms: number; cpuMs: number }[] = [];
      for (let run = 0; run < 3; run++) {
        const cpu = process.cpuUsage();
        const start = performance.now();
        await engine.round.check();
        const used = process.cpuUsage(cpu);
        checks.push({ ms: performance.now() - start, cpuMs: (used.user + used.system) / 1000 });
      }
      const check = checks.sort((a, b) => a.ms - b.ms)[1]!;
      rows.push({
        metric: `check of the service, ${label} files in ${(files / 100).toLocaleString('en-US')} flows unchanged (median of 3, 1 request): wall / CPU`,
        value: `${seconds(check.ms)} / ${seconds(check.cpuMs)}`,
        target: '',
        met: null,
      });
      rows.push(
        {
          metric: `rescan of ${label} unchanged files (median of 3): wall / CPU`,
          value: `${seconds(median.ms)} / ${seconds(median.cpuMs)}`,
          target: '',
          met: null,
        },
        {
          metric: `rescan of ${label} unchanged files: read(2) bytes / calls, requests to the service`,
          value: `${(median.bytes / 2 ** 20).toFixed(1)} MiB / ${median.calls} / ${median.requests}`,
          target: '0 requests',
          met: median.requests === 0,
        },
      );
    } finally {
      await close();
      rmSync(root, { recursive: true, force: true });
    }
  }
  return rows;
}

export async function runSyncBench(): Promise<BenchRow[]> {
  const dir = mkdtempSync(join(tmpdir(), 'flowsync-bench-sync-'));
  const logPath = join(dir, 'service.log');
  const service = await startServeProcess(join(dir, 'service.db'), logPath);
  // FLOWSYNC_BENCH_PARTS=initial,edits,git,large,outage,rescan,deletions runs only those parts (all by default).
  const parts = (process.env.FLOWSYNC_BENCH_PARTS ?? 'initial,edits,git,large,outage,rescan,deletions').split(
    ',',
  );
  const runs: Record<string, () => Promise<BenchRow[]>> = {
    initial: () => initialSync(dir, service),
    edits: () => editLatency(dir, service),
    git: () => gitCheckout(dir, service, logPath),
    large: () => largeRepository(dir, service, logPath),
    outage: () => outage(dir),
    rescan: () => rescanCost(dir, service),
    deletions: async () => [
      ...(await deletions(dir, service, 10_000)),
      ...(await deletions(dir, service, 50_000)),
    ],
  };
  try {
    const rows: BenchRow[] = [];
    for (const part of parts) rows.push(...(await runs[part]!()));
    return rows;
  } finally {
    await service.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  printTable('sync (bench/sync.ts)', await runSyncBench());
}
