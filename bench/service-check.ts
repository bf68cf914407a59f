/**
 * What the agents' check of the service every minute costs (issue 41): each watching engine asks `list_flows`
 * every 45 s ±20 % (SERVICE_CHECK_MS), and lists only the flows whose aggregate changed since its last check. Here:
 * a repository of 100,000 files (1,000 flows of 100) on the real `flowsync serve`, and 50 agents checking it.
 * Run: npm run bench -- service-check
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Pool } from 'undici';
import { createClient } from '../src/client/index.ts';
import { SERVICE_CHECK_MS, SyncState } from '../src/sync/index.ts';
import { cpuSeconds } from './proc.ts';
import { sequentialLatency, type BenchRow } from './report.ts';
import { FILES_PER_FLOW, FLOWS_PER_BATCH, fileBatches, functionCaller } from './service-calls.ts';
import { startServeProcess } from '../test/support/serve-process.ts';

const BATCHES = 100; // 100 × 10 flows × 100 files: 100,000 files
const AGENTS = 50;
const ROUNDS = 4;

export async function runServiceCheckBench(): Promise<BenchRow[]> {
  const dir = mkdtempSync(join(tmpdir(), 'flowsync-bench-check-'));
  const service = await startServeProcess(join(dir, 'service.db'), join(dir, 'service.log'));
  const pool = new Pool(service.url, { connections: 4, pipelining: 1, keepAliveTimeout: 30_000 });
  const post = functionCaller([pool]);
  const user = `Bearer ${service.tokens.user}`;
  const clients = Array.from({ length: AGENTS }, () =>
    createClient({ baseUrl: service.url, auth: { userToken: service.tokens.user } }),
  );
  try {
    const batches = fileBatches(BATCHES);
    for (const flows of batches)
      await post(
        'svc/flow_def/action/sync_batch/run',
        { repo_owner: 'bench', repo_name: 'repo', flows },
        user,
      );
    const files = BATCHES * FLOWS_PER_BATCH * FILES_PER_FLOW;
    const repo = { repo_owner: 'bench', repo_name: 'repo' };

    // One agent's check, one after another: the answer's time as a client sees it.
    const latency = await sequentialLatency(() => clients[0]!.flowDef.listFlows(repo), 100, 10);

    // 50 agents checking at once, ROUNDS times (the worst case: every agent's timer firing together), through the
    // agent's own client (zod parse of the answer included): the service's CPU per check read from /proc.
    const serviceCpu = cpuSeconds([service.pid]);
    const clientCpu = process.cpuUsage();
    const burst = performance.now();
    for (let round = 0; round < ROUNDS; round++)
      await Promise.all(clients.map((client) => client.flowDef.listFlows(repo)));
    const burstMs = (performance.now() - burst) / ROUNDS;
    const checks = AGENTS * ROUNDS;
    const serviceMsPerCheck = ((cpuSeconds([service.pid]) - serviceCpu) * 1000) / checks;
    const used = process.cpuUsage(clientCpu);
    const clientMsPerCheck = (used.user + used.system) / 1000 / checks;
    // 50 agents, each every SERVICE_CHECK_MS on average: the share of one core the service spends on them.
    const servicePercent = (serviceMsPerCheck * AGENTS * 100) / SERVICE_CHECK_MS;

    // The agent's side of a full check (the first, and at each periodic rescan): every acknowledged file read from
    // its state and every flow's aggregate hashed. A quick check that finds nothing changed does none of it.
    const statePath = join(dir, 'state.db');
    const state = new SyncState(statePath);
    const repoId = state.ensureRepo('/bench', 'bench', 'bench', 'repo');
    const insert = state.db.prepare(
      `INSERT INTO files (repo_id, flow_path, path, size, mtime_ms, local_hash, warning, acked_hash)
       VALUES (?, ?, ?, 1, 1, ?, NULL, ?)`,
    );
    state.db.transaction(() => {
      for (const flows of batches)
        for (const flow of flows)
          for (const file of flow.files) insert.run(repoId, flow.flow_path, file.path, file.hash, file.hash);
    })();
    const fullStart = process.cpuUsage();
    state.acknowledgedAggregates(repoId);
    const full = process.cpuUsage(fullStart);
    // Made once, the aggregates are kept in the state until an acknowledged file of their flow changes.
    const keptStart = process.cpuUsage();
    state.acknowledgedAggregates(repoId);
    const kept = process.cpuUsage(keptStart);
    state.close();

    const per = (ms: number) => `${ms.toFixed(1)} ms`;
    return [
      {
        metric: 'repository',
        value: `${files.toLocaleString('en')} files in 1,000 flows`,
        target: '',
        met: null,
      },
      {
        metric: 'list_flows answer, one agent (p50 / p99)',
        value: `${per(latency.p50)} / ${per(latency.p99)}`,
        target: '',
        met: null,
      },
      {
        metric: `${AGENTS} agents checking at once (wall time of the burst)`,
        value: per(burstMs),
        target: '',
        met: null,
      },
      { metric: 'service CPU per check', value: per(serviceMsPerCheck), target: '', met: null },
      {
        metric: `service CPU for ${AGENTS} agents, one check each per ${SERVICE_CHECK_MS / 1000} s`,
        value: `${servicePercent.toFixed(2)} % of one core`,
        target: '< 5 %',
        met: servicePercent < 5,
      },
      {
        metric: 'agent CPU per quick check (the call and its answer parsed: nothing changed)',
        value: per(clientMsPerCheck),
        target: '',
        met: null,
      },
      {
        metric:
          'agent CPU per full check, aggregates made (read 100,000 acknowledged files, hash 1,000 flows)',
        value: per((full.user + full.system) / 1000),
        target: '',
        met: null,
      },
      {
        metric: 'agent CPU per full check, aggregates kept (read 1,000 kept in the state)',
        value: per((kept.user + kept.system) / 1000),
        target: '',
        met: null,
      },
    ];
  } finally {
    await Promise.all(clients.map((client) => client.close()));
    await pool.close();
    await service.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}
