/**
 * flowsync beside Syncthing, the reference for a continuous folder agent: both on the same generated tree (100,000
 * files of 64 bytes in 1,000 folders), one after the other in one run, flowsync from the build (dist/), as users
 * run it. Syncthing runs with one send-only folder, its watcher on, everything that could leave the machine off
 * (discovery, relays, NAT/STUN, usage and crash reports, upgrades) and listening on 127.0.0.1 only; the bench
 * checks that neither tool holds a socket off loopback.
 * Run: npm run bench -- peer   (about six minutes; needs `syncthing` on PATH: apt-get install syncthing)
 * FLOWSYNC_BENCH_PEER_FLOWS (default 1000 folders of 100 files) and FLOWSYNC_BENCH_PEER_IDLE_S (default 60) make
 * a quick trial run possible. The rows are issue 50's (docs/memory.md says where each megabyte goes): memory at
 * rest after the first pass and after a burst of 10,000 edits, the service's, the restart, and `flowsync status`'s
 * CPU beside `node -e 0`'s.
 */
import Database from 'better-sqlite3';
import { execFileSync, spawn, spawnSync, type ChildProcess } from 'node:child_process';
import {
  appendFileSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  openSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { userEnv } from '../test/support/agent-process.ts';
import { FLOWSYNC_BIN } from '../test/support/cli.ts';
import { startServeProcess } from '../test/support/serve-process.ts';
import { cpuSeconds, loadAverage, offMachineSockets, peakRssMb, processTree, rssMb } from './proc.ts';
import { percentile, type BenchRow } from './report.ts';
import { initialSync, writeTree } from './sync.ts';

const FLOWS = Number(process.env.FLOWSYNC_BENCH_PEER_FLOWS ?? 1000);
const FILES = FLOWS * 100;
const IDLE_S = Number(process.env.FLOWSYNC_BENCH_PEER_IDLE_S ?? 60);

export const PEER_NAME = 'Syncthing';

const seconds = (ms: number) => `${(ms / 1000).toFixed(2)} s`;
const mb = (value: number) => `${Math.round(value)} MB`;

/** What one tool measured; the table puts the two side by side. */
interface Measured {
  load: string;
  firstScanMs: number;
  steadyRssMb: number;
  /** flowsync only: `flowsync serve`, a process of its own (a remote service in real use). */
  serviceRssMb?: number;
  peakRssMb: number;
  servicePeakRssMb?: number;
  idleCpuPercent: number;
  /** Edit → noticed, per setting (Syncthing: watcher delay 10 s and 1 s), in ms, sorted. */
  edits: { label: string; samples: number[] }[];
  restartMs?: number;
  /** flowsync only: 60 s after a burst of 10,000 edits was on the service, the agent's and the service's RSS. */
  burst?: { agentRssMb: number; serviceRssMb: number; sentMs: number };
  /** flowsync only: CPU of `flowsync status` with this repository, with none, and of `node -e 0` (ms, medians). */
  statusCpu?: { repository: number; none: number; node: number; floor: number };
  offMachine: string[];
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

/** Idle CPU over `IDLE_S` s and the RSS at its end (steady) of the processes `pids()` names at each read. */
async function idle(pids: () => number[]): Promise<{ cpuPercent: number; rss: number }> {
  const before = cpuSeconds(pids());
  await sleep(IDLE_S * 1000);
  const cpuPercent = ((cpuSeconds(pids()) - before) / IDLE_S) * 100;
  return { cpuPercent, rss: rssMb(pids()) };
}

function exited(child: ChildProcess): Promise<void> {
  return new Promise((done) => {
    if (child.exitCode !== null || child.signalCode !== null) return done();
    child.once('exit', () => done());
  });
}

// ---------------------------------------------------------------------------------------------------------------
// Syncthing

function syncthingInstalled(): boolean {
  return !spawnSync('syncthing', ['--version']).error;
}

/** A home of its own, configured so that nothing leaves the machine; returns the API's address and key. */
async function configureSyncthing(home: string, tree: string) {
  execFileSync('syncthing', ['generate', `--home=${home}`, '--no-default-folder'], { stdio: 'ignore' });
  const path = join(home, 'config.xml');
  let xml = readFileSync(path, 'utf8');
  const set = (tag: string, value: string) => {
    const pattern = new RegExp(`<${tag}>[^<]*</${tag}>`);
    if (!pattern.test(xml))
      throw new Error(`Syncthing's config.xml has no <${tag}>: a version this bench does not know`);
    xml = xml.replace(pattern, `<${tag}>${value}</${tag}>`);
  };
  const device = /<device id="([^"]+)"/.exec(xml)![1]!;
  const apiKey = /<apikey>([^<]+)<\/apikey>/.exec(xml)![1]!;
  const [apiPort, listenPort] = [await freePort(), await freePort()];
  xml = xml.replace(/(<gui[^>]*>\s*<address>)[^<]*/, `$1127.0.0.1:${apiPort}`);
  set('listenAddress', `tcp://127.0.0.1:${listenPort}`);
  for (const off of ['globalAnnounceEnabled', 'localAnnounceEnabled', 'relaysEnabled', 'natEnabled'])
    set(off, 'false');
  set('globalAnnounceServer', '');
  set('stunServer', '');
  set('urAccepted', '-1');
  set('autoUpgradeIntervalH', '0');
  set('crashReportingEnabled', 'false');
  set('startBrowser', 'false');
  // One send-only folder on the tree, watcher on with its default delay (10 s); the marker Syncthing expects.
  mkdirSync(join(tree, '.stfolder'), { recursive: true });
  const folder = `<folder id="peer" label="peer" path="${tree}" type="sendonly" rescanIntervalS="3600" fsWatcherEnabled="true" fsWatcherDelayS="10" ignorePerms="false" autoNormalize="true">
        <filesystemType>basic</filesystemType>
        <device id="${device}" introducedBy=""></device>
        <markerName>.stfolder</markerName>
    </folder>
    `;
  xml = xml.replace(/(\s*)<gui/, `$1${folder}<gui`);
  writeFileSync(path, xml);
  return { api: `http://127.0.0.1:${apiPort}`, apiKey };
}

async function measureSyncthing(dir: string, tree: string): Promise<Measured> {
  const home = join(dir, 'syncthing');
  const { api, apiKey } = await configureSyncthing(home, tree);
  const rest = async (path: string, init: RequestInit = {}) => {
    const response = await fetch(`${api}${path}`, { ...init, headers: { 'X-API-Key': apiKey } });
    if (!response.ok) throw new Error(`Syncthing ${path}: ${response.status} ${await response.text()}`);
    const text = await response.text();
    return text ? JSON.parse(text) : null;
  };
  const status = async (): Promise<{ state: string; globalFiles: number; sequence: number } | null> => {
    try {
      return await rest('/rest/db/status?folder=peer');
    } catch {
      return null; // not answering yet
    }
  };
  const untilIdle = async () => {
    for (;;) {
      const now = await status();
      if (now?.state === 'idle' && now.globalFiles === FILES) return;
      if (child.exitCode !== null)
        throw new Error(`syncthing exited with ${child.exitCode}; see ${home}/syncthing.log`);
      await sleep(50);
    }
  };

  const load = loadAverage();
  const start = performance.now();
  // As users run it: with its monitor process (which restarts it), no browser, no upgrades.
  const serve = () =>
    spawn('syncthing', ['serve', `--home=${home}`, '--no-browser', '--no-upgrade'], {
      env: { ...process.env, STNOUPGRADE: '1' },
      stdio: ['ignore', openSync(join(home, 'syncthing.log'), 'a'), 'inherit'],
    });
  let child = serve();
  const shutdown = async () => {
    await rest('/rest/system/shutdown', { method: 'POST' }).catch(() => undefined);
    const killer = setTimeout(() => child.kill('SIGKILL'), 15_000);
    await exited(child);
    clearTimeout(killer);
  };
  try {
    await untilIdle();
    const firstScanMs = performance.now() - start;
    const pids = () => processTree(child.pid!);
    const { cpuPercent, rss } = await idle(pids);
    const offMachine = offMachineSockets(pids());

    // Edit → noticed: the folder's sequence moves when Syncthing has the change in its local index.
    const edits: Measured['edits'] = [];
    for (const [delayS, count] of [
      [10, 3],
      [1, 10],
    ] as const) {
      if (delayS !== 10) {
        await rest('/rest/config/folders/peer', {
          method: 'PATCH',
          body: JSON.stringify({ fsWatcherDelayS: delayS }),
        });
        await sleep(1000); // the folder restarts with its new setting
        await untilIdle();
      }
      const samples: number[] = [];
      for (let edit = 0; edit < count; edit++) {
        const before = (await status())!.sequence;
        const t0 = performance.now();
        appendFileSync(
          join(tree, 'flows', `flow-${edit % FLOWS}`, `step-${delayS}.yaml`),
          `syncthing ${edit}\n`,
        );
        while ((await status())!.sequence === before) await sleep(20);
        samples.push(performance.now() - t0);
        await sleep(500);
      }
      edits.push({ label: `watcher delay ${delayS} s`, samples: samples.sort((a, b) => a - b) });
    }
    const peakRss = peakRssMb(pids());
    // Restart with nothing changed → its folder scanned and idle again (its watcher starts after that scan). Its
    // events say when the scan that follows the start ended: the folder's state alone reads "idle" before it.
    await shutdown();
    const restarted = performance.now();
    child = serve();
    for (;;) {
      const events = (await rest('/rest/events?events=StateChanged&since=0&timeout=1').catch(() => null)) as
        { data: { folder: string; from: string; to: string } }[] | null;
      if (
        events?.some(({ data }) => data.folder === 'peer' && data.from === 'scanning' && data.to === 'idle')
      )
        break;
      if (child.exitCode !== null)
        throw new Error(`syncthing exited with ${child.exitCode}; see ${home}/syncthing.log`);
      await sleep(50);
    }
    const restartMs = performance.now() - restarted;
    return {
      load,
      firstScanMs,
      steadyRssMb: rss,
      peakRssMb: peakRss,
      idleCpuPercent: cpuPercent,
      edits,
      restartMs,
      offMachine,
    };
  } finally {
    await shutdown();
    rmSync(join(tree, '.stfolder'), { recursive: true, force: true });
  }
}

// ---------------------------------------------------------------------------------------------------------------
// flowsync

async function measureFlowsync(dir: string, tree: string): Promise<Measured> {
  const dbPath = join(dir, 'service.db');
  const service = await startServeProcess(dbPath, join(dir, 'service.log'));
  const env = { ...process.env, ...userEnv(join(dir, 'home'), service) };
  const startAgent = async () => {
    const start = performance.now();
    const child = spawn(process.execPath, [FLOWSYNC_BIN, 'start', tree], {
      env,
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    let out = '';
    child.stdout!.on('data', (chunk: Buffer) => (out += chunk.toString('utf8')));
    while (!out.includes('Watching 1 repository')) {
      if (child.exitCode !== null) throw new Error(`flowsync start exited: ${out}`);
      await sleep(10);
    }
    return { child, ms: performance.now() - start };
  };
  const stopAgent = async (child: ChildProcess) => {
    child.kill('SIGINT');
    await exited(child);
  };

  const load = loadAverage();
  const first = await startAgent();
  let agent = first.child;
  const db = new Database(dbPath, { readonly: true });
  try {
    const pids = () => [agent.pid!];
    const { cpuPercent, rss } = await idle(pids);
    const offMachine = offMachineSockets([agent.pid!, service.pid]);

    // Edit → noticed: the service holds the new content (what a user of the service would see).
    // One file looked up by its flow and path (indexed), not a LIKE over 100,000 rows on every poll.
    const content = db
      .prepare(
        `SELECT ff.content FROM flow_files ff JOIN flows f ON f.id = ff.flow_id WHERE f.flow_path = ? AND ff.path = ?`,
      )
      .pluck();
    const samples: number[] = [];
    for (let edit = 0; edit < 20; edit++) {
      const marker = `flowsync edit ${edit} ${Date.now()}`;
      const flowPath = `flows/flow-${edit % FLOWS}`;
      const t0 = performance.now();
      appendFileSync(join(tree, flowPath, 'step-20.yaml'), `${marker}\n`);
      while (!((content.get(flowPath, 'step-20.yaml') as string | undefined) ?? '').includes(marker))
        await sleep(5);
      samples.push(performance.now() - t0);
      await sleep(500);
    }
    const measured: Measured = {
      load,
      firstScanMs: first.ms,
      steadyRssMb: rss,
      serviceRssMb: rssMb([service.pid]),
      peakRssMb: peakRssMb(pids()),
      servicePeakRssMb: peakRssMb([service.pid]),
      idleCpuPercent: cpuPercent,
      edits: [{ label: '', samples: samples.sort((a, b) => a - b) }],
      offMachine,
    };
    measured.burst = await editBurst(tree, db, agent.pid!, service.pid);
    await stopAgent(agent);
    const second = await startAgent();
    agent = second.child;
    measured.restartMs = second.ms;
    await stopAgent(agent);
    measured.statusCpu = statusCpu(env, join(dir, 'empty-home'));
    return measured;
  } finally {
    db.close();
    await stopAgent(agent);
    await service.stop();
  }
}

/** Files of the burst: the first 100 folders' 100 files each (10,000 at the default size). */
const BURST_FLOWS = Math.min(FLOWS, 100);

/**
 * A burst of 10,000 edits (each file of the first 100 folders rewritten), timed until the service holds every one;
 * then IDLE_S at rest, and the agent's and the service's RSS.
 */
async function editBurst(
  tree: string,
  db: Database.Database,
  agentPid: number,
  servicePid: number,
): Promise<NonNullable<Measured['burst']>> {
  const marker = `burst ${Date.now()}`;
  const start = performance.now();
  for (let flow = 0; flow < BURST_FLOWS; flow++)
    for (let file = 0; file < 100; file++)
      writeFileSync(join(tree, 'flows', `flow-${flow}`, `step-${file}.yaml`), `${marker} ${flow} ${file}\n`);
  const held = db.prepare(`SELECT count(*) FROM flow_files WHERE content LIKE ?`).pluck();
  while ((held.get(`${marker} %`) as number) < BURST_FLOWS * 100) await sleep(200);
  const sentMs = performance.now() - start;
  await sleep(IDLE_S * 1000);
  return { agentRssMb: rssMb([agentPid]), serviceRssMb: rssMb([servicePid]), sentMs };
}

/** Without the extra certificates some sandboxes set: every Node process parses them at start (bench/cli.ts). */
function withoutExtraCerts(env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  const copy = { ...env };
  delete copy.NODE_EXTRA_CA_CERTS;
  return copy;
}

/** CPU time (user + system, ms) of one process run to its end, from GNU time; the median of `runs`. */
function medianCpuMs(args: string[], env: NodeJS.ProcessEnv, runs = 7, mustSucceed = false): number {
  const samples: number[] = [];
  for (let run = 0; run < runs; run++) {
    const out = spawnSync('/usr/bin/time', ['-f', '%U %S', process.execPath, ...args], {
      env: withoutExtraCerts(env),
      encoding: 'utf8',
    });
    if (mustSucceed && out.status !== 0) throw new Error(`${args.join(' ')} failed: ${out.stderr}`);
    const [user, system] = out.stderr.trim().split('\n').at(-1)!.split(' ').map(Number);
    samples.push((user! + system!) * 1000);
  }
  return samples.sort((a, b) => a - b)[Math.floor(runs / 2)]!;
}

/**
 * `flowsync status` with the bench's repository in the state (no agent running), with none, `node -e 0`, and the
 * floor of a status that looks at the service: one `list_flows` call of the repository and nothing else
 * (bench/status-floor.mjs; `local/tree` is the name the agent gives the bench's folder, which is no git checkout).
 */
function statusCpu(env: NodeJS.ProcessEnv, emptyHome: string): NonNullable<Measured['statusCpu']> {
  if (!existsSync('/usr/bin/time'))
    return { repository: Number.NaN, none: Number.NaN, node: Number.NaN, floor: Number.NaN };
  return {
    repository: medianCpuMs([FLOWSYNC_BIN, 'status'], env),
    none: medianCpuMs([FLOWSYNC_BIN, 'status'], { ...process.env, ...userEnv(emptyHome) }),
    node: medianCpuMs(['-e', '0'], process.env),
    floor: medianCpuMs([join(import.meta.dirname, 'status-floor.mjs'), 'local', 'tree'], env, 7, true),
  };
}

// ---------------------------------------------------------------------------------------------------------------

function rows(flowsync: Measured, syncthing: Measured | null, ratio: BenchRow | null): BenchRow[] {
  const peer = (value: (m: Measured) => string) => (syncthing ? value(syncthing) : 'not installed');
  const edit = (m: Measured, index: number) => {
    const { label, samples } = m.edits[index]!;
    return `${(percentile(samples, 50) / 1000).toFixed(2)} s p50, ${(samples.at(-1)! / 1000).toFixed(2)} s max (${samples.length}${label ? `, ${label}` : ''})`;
  };
  const scanTarget = syncthing ? syncthing.firstScanMs : Number.NaN;
  return [
    {
      metric: '1-min load average before each tool started (2 cores)',
      value: flowsync.load,
      peer: peer((m) => m.load),
      target: '',
      met: null,
    },
    {
      metric: `first full scan → idle, ${FILES.toLocaleString('en')} files / ${FLOWS.toLocaleString('en')} folders (flowsync: \`start\` → "Watching", uploads included)`,
      value: seconds(flowsync.firstScanMs),
      peer: peer((m) => seconds(m.firstScanMs)),
      target: '≤ Syncthing',
      met: syncthing ? flowsync.firstScanMs <= scanTarget : null,
    },
    {
      metric: `RSS ${IDLE_S} s after that (steady; Syncthing: with its monitor process)`,
      value: `${mb(flowsync.steadyRssMb)} (+ ${mb(flowsync.serviceRssMb!)} \`flowsync serve\`)`,
      peer: peer((m) => mb(m.steadyRssMb)),
      target: '≤ 120 MB and ≤ Syncthing',
      met: flowsync.steadyRssMb <= 120 && (!syncthing || flowsync.steadyRssMb <= syncthing.steadyRssMb),
    },
    {
      metric: 'RSS high-water mark (VmHWM; Syncthing: summed over its two processes)',
      value: `${mb(flowsync.peakRssMb)} (+ ${mb(flowsync.servicePeakRssMb!)} \`flowsync serve\`)`,
      peer: peer((m) => mb(m.peakRssMb)),
      target: '≤ 200 MB',
      met: flowsync.peakRssMb <= 200,
    },
    {
      metric: `idle CPU over those ${IDLE_S} s`,
      value: `${flowsync.idleCpuPercent.toFixed(2)} %`,
      peer: peer((m) => `${m.idleCpuPercent.toFixed(2)} %`),
      target: '< 1 %',
      met: flowsync.idleCpuPercent < 1,
    },
    {
      metric:
        'edit (append to a file) → noticed (flowsync: the service holds it; Syncthing: in its local index)',
      value: edit(flowsync, 0),
      peer: peer((m) => edit(m, 0)),
      target: '',
      met: null,
    },
    {
      metric: 'edit → noticed, Syncthing with fsWatcherDelayS 1',
      value: '',
      peer: peer((m) => edit(m, 1)),
      target: '',
      met: null,
    },
    {
      metric: 'restart with nothing changed → watching again (Syncthing: its scan at start ended, idle)',
      value: seconds(flowsync.restartMs!),
      peer: peer((m) => seconds(m.restartMs!)),
      target: '≤ 2 s',
      met: flowsync.restartMs! <= 2000,
    },
    {
      metric: `agent RSS ${IDLE_S} s after a burst of ${(BURST_FLOWS * 100).toLocaleString('en')} edits was on the service (sent in ${seconds(flowsync.burst!.sentMs)})`,
      value: mb(flowsync.burst!.agentRssMb),
      peer: '',
      target: '≤ 150 MB',
      met: flowsync.burst!.agentRssMb <= 150,
    },
    {
      metric: '`flowsync serve` RSS at rest after the ingest / after the burst',
      value: `${mb(flowsync.serviceRssMb!)} / ${mb(flowsync.burst!.serviceRssMb)}`,
      peer: '',
      target: '≤ 150 MB',
      met: Math.max(flowsync.serviceRssMb!, flowsync.burst!.serviceRssMb) <= 150,
    },
    ...statusRows(flowsync.statusCpu!),
    ...(ratio ? [ratio] : []),
    {
      metric: 'sockets off loopback (must be none)',
      value: String(flowsync.offMachine.length),
      peer: peer((m) => String(m.offMachine.length)),
      target: '0',
      met: flowsync.offMachine.length === 0 && (syncthing?.offMachine.length ?? 0) === 0,
    },
  ];
}

function statusRows({ repository, none, node, floor }: NonNullable<Measured['statusCpu']>): BenchRow[] {
  const ms = (value: number) => `${Math.round(value)} ms`;
  const ratio = (value: number) => `${(value / node).toFixed(1)}×`;
  return [
    {
      metric: `\`flowsync status\` CPU, ${FILES.toLocaleString('en')} files synced, no agent (median of 7; \`node -e 0\`: ${ms(node)})`,
      value: `${ms(repository)} (${ratio(repository)})`,
      peer: '',
      target: '≤ 2.6× `node -e 0`',
      met: repository <= 2.6 * node,
    },
    {
      metric:
        "its floor: Node, undici's pool and one `list_flows` call of the repository, nothing else (bench/status-floor.mjs)",
      value: `${ms(floor)} (${ratio(floor)})`,
      peer: '',
      target: '',
      met: null,
    },
    {
      metric: '`flowsync status` CPU, no repository (median of 7)',
      value: `${ms(none)} (${ratio(none)})`,
      peer: '',
      target: '≤ 2.6× `node -e 0`',
      met: none <= 2.6 * node,
    },
  ];
}

export async function runPeerBench(): Promise<BenchRow[]> {
  if (!syncthingInstalled())
    console.error(
      'syncthing is not on PATH: only flowsync is measured. Install it with `apt-get install syncthing`.',
    );
  const dir = mkdtempSync(join(tmpdir(), 'flowsync-bench-peer-'));
  try {
    const tree = join(dir, 'tree');
    writeTree(tree, FLOWS, 100, 64);
    const syncthing = syncthingInstalled() ? await measureSyncthing(dir, tree) : null;
    const flowsync = await measureFlowsync(dir, tree);
    for (const socket of [...flowsync.offMachine, ...(syncthing?.offMachine ?? [])])
      console.error(`socket off loopback: ${socket}`);
    // The 10,000-file / 100 MB initial sync ÷ sha256sum, bench/sync.ts's part (the engine in this process).
    let ratio: BenchRow | null = null;
    if (process.env.FLOWSYNC_BENCH_PEER_RATIO !== '0') {
      const service = await startServeProcess(join(dir, 'ratio.db'), join(dir, 'ratio.log'));
      try {
        const initial = await initialSync(dir, service);
        const row = initial.find((r) => r.metric === 'initial sync ÷ sha256sum')!;
        const value = Number.parseFloat(row.value);
        ratio = {
          metric:
            'initial sync, 10,000 files / 100 MB ÷ `find … \\| xargs sha256sum` (bench/sync.ts initial)',
          value: row.value,
          peer: '',
          target: '≤ 2.0×',
          met: value <= 2.0,
        };
      } finally {
        await service.stop();
      }
    }
    return rows(flowsync, syncthing, ratio);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
