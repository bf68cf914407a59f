/**
 * The service on each database: one `flowsync serve` on SQLite (the default), one on Postgres, and two on one
 * Postgres database with the calls spread over both, as behind a load balancer. Ingest is bench/service.ts's
 * (sync_batch, 1 KiB files, two batches in flight per process), then small calls one after another.
 * Run: npm run bench -- service-db   (needs Debian's postgresql: the bench makes a cluster and removes it)
 */
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { Pool } from 'undici';
import { cpuSeconds } from './proc.ts';
import { printTable, sequentialLatency, type BenchRow } from './report.ts';
import { FILES_PER_FLOW, FLOWS_PER_BATCH, fileBatches, functionCaller } from './service-calls.ts';
import { startPostgresCluster } from '../test/support/postgres.ts';
import { startServeProcess, type ServeProcess } from '../test/support/serve-process.ts';

const BATCHES = 30;
const LATENCY_CALLS = 2000;

interface Measured {
  filesPerSecond: number;
  /** CPU time per 1,000 files ingested: the service processes', and the Postgres server's. */
  serviceCpuMs: number;
  databaseCpuMs: number;
  p50: number;
  p99: number;
}

/** Every process of the Postgres server (the bench's cluster is the only one running). */
function postgresPids(): number[] {
  return readdirSync('/proc')
    .filter((entry) => /^\d+$/.test(entry))
    .filter((pid) => {
      try {
        return readFileSync(`/proc/${pid}/comm`, 'utf8').trim() === 'postgres';
      } catch {
        return false;
      }
    })
    .map(Number);
}

async function measure(
  processes: ServeProcess[],
  tokens: { user: string; admin: string },
): Promise<Measured> {
  const pools = processes.map(
    (serve) => new Pool(serve.url, { connections: 4, pipelining: 1, keepAliveTimeout: 30_000 }),
  );
  const post = functionCaller(pools);
  try {
    const user = `Bearer ${tokens.user}`;
    const syncBatch = (flows: unknown) =>
      post('svc/flow_def/action/sync_batch/run', { repo_owner: 'bench', repo_name: 'repo', flows }, user);
    const batches = fileBatches(BATCHES + 2);
    for (const warm of batches.splice(0, 2)) await syncBatch(warm);
    const servicePids = processes.map((serve) => serve.pid);
    const serviceCpuBefore = cpuSeconds(servicePids);
    // Per process: the pools open connections (a server process each) as the calls come, during the measure too.
    const databaseCpuBefore = new Map(postgresPids().map((pid) => [pid, cpuSeconds([pid])]));
    const start = performance.now();
    let next = 0;
    // Two batches in flight for each process, as two agents' uploaders would send them.
    await Promise.all(
      Array.from({ length: 2 * processes.length }, async () => {
        while (next < batches.length) await syncBatch(batches[next++]);
      }),
    );
    const files = BATCHES * FLOWS_PER_BATCH * FILES_PER_FLOW;
    const filesPerSecond = files / ((performance.now() - start) / 1000);
    const serviceCpuMs = ((cpuSeconds(servicePids) - serviceCpuBefore) * 1_000_000) / files;
    const databaseCpu = postgresPids().reduce(
      (sum, pid) => sum + cpuSeconds([pid]) - (databaseCpuBefore.get(pid) ?? 0),
      0,
    );
    const databaseCpuMs = (databaseCpu * 1_000_000) / files;

    const admin = `Admin ${tokens.admin}`;
    await post(
      'svc/tracker/private/workflow_state_cache_upsert',
      { team_id: 'ENG', states: [{ id: 's1', name: 'Todo', normalized_name: 'todo' }] },
      admin,
    );
    const { p50, p99 } = await sequentialLatency(
      () => post('svc/tracker/private/workflow_state_cache_get_by_team', { team_id: 'ENG' }, admin),
      LATENCY_CALLS,
      200,
    );
    return {
      filesPerSecond,
      serviceCpuMs,
      databaseCpuMs,
      p50,
      p99,
    };
  } finally {
    await Promise.all(pools.map((pool) => pool.close()));
  }
}

export async function runServiceDbBench(): Promise<BenchRow[]> {
  const dir = mkdtempSync(join(tmpdir(), 'flowsync-bench-db-'));
  const cluster = await startPostgresCluster();
  const started: ServeProcess[] = [];
  const serve = async (db: string, name: string) => {
    const process = await startServeProcess(db, join(dir, `${name}.log`), ['--log-level', 'warn']);
    started.push(process);
    return process;
  };
  try {
    const sqlite = await serve(join(dir, 'service.db'), 'sqlite');
    const onSqlite = await measure([sqlite], sqlite.tokens);
    await sqlite.stop();

    const oneUrl = await cluster.createDatabase();
    const pgOne = await serve(oneUrl, 'pg-one');
    const onPostgres = await measure([pgOne], pgOne.tokens);
    await pgOne.stop();

    const twoUrl = await cluster.createDatabase();
    const first = await serve(twoUrl, 'pg-a');
    const second = await serve(twoUrl, 'pg-b');
    const onTwo = await measure([first, second], first.tokens);

    const ingest = (m: Measured) => `${Math.round(m.filesPerSecond).toLocaleString('en')} files/s`;
    const ms = (value: number) => `${value.toFixed(3)} ms`;
    const cpu = (m: Measured) =>
      `${Math.round(m.serviceCpuMs)} ms service + ${Math.round(m.databaseCpuMs)} ms Postgres = ${Math.round(m.serviceCpuMs + m.databaseCpuMs)} ms`;
    const shape = `${BATCHES} batches of ${FLOWS_PER_BATCH} flows × ${FILES_PER_FLOW} files of 1 KiB`;
    return [
      {
        metric: `sync_batch ingest, SQLite, 1 process (${shape}, 2 in flight)`,
        value: ingest(onSqlite),
        target: '',
        met: null,
      },
      {
        metric: 'sync_batch ingest, Postgres, 1 process (2 in flight)',
        value: ingest(onPostgres),
        target: '',
        met: null,
      },
      {
        metric: 'sync_batch ingest, Postgres, 2 processes on one database (2 in flight each)',
        value: ingest(onTwo),
        target: `≥ SQLite's 1 process (${ingest(onSqlite)})`,
        met: onTwo.filesPerSecond >= onSqlite.filesPerSecond,
      },
      {
        metric: 'CPU per 1,000 files ingested, SQLite',
        value: `${Math.round(onSqlite.serviceCpuMs)} ms`,
        target: '',
        met: null,
      },
      {
        metric: 'CPU per 1,000 files ingested, Postgres, 1 process',
        value: cpu(onPostgres),
        target: '',
        met: null,
      },
      {
        metric: 'CPU per 1,000 files ingested, Postgres, 2 processes',
        value: cpu(onTwo),
        target: '',
        met: null,
      },
      {
        metric: `small call p50 / p99, SQLite (${LATENCY_CALLS} sequential)`,
        value: `${ms(onSqlite.p50)} / ${ms(onSqlite.p99)}`,
        target: '',
        met: null,
      },
      {
        metric: 'small call p50 / p99, Postgres, 1 process',
        value: `${ms(onPostgres.p50)} / ${ms(onPostgres.p99)}`,
        target: '',
        met: null,
      },
      {
        metric: 'small call p50 / p99, Postgres, 2 processes (alternating)',
        value: `${ms(onTwo.p50)} / ${ms(onTwo.p99)}`,
        target: '',
        met: null,
      },
    ];
  } finally {
    for (const process of started) await process.stop();
    cluster.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  printTable('service on SQLite and Postgres (bench/service-db.ts)', await runServiceDbBench());
}
