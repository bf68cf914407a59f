/**
 * Service throughput and latency over loopback with keep-alive, against the real embedded service.
 * Run: npm run bench -- service   (or node --import ./scripts/register-tsx.mjs bench/service.ts)
 */
import { createHash, randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { Pool } from 'undici';
import { printTable, sequentialLatency, type BenchRow } from './report.ts';
import { FILES_PER_FLOW, FLOWS_PER_BATCH, fileBatches, functionCaller } from './service-calls.ts';
import { memberToken } from '../test/support/members.ts';
import { startServeProcess } from '../test/support/serve-process.ts';

const BATCHES = 30;
const LATENCY_CALLS = 3000;
/** The shared token against a member's, in alternated blocks so that a drift of the machine falls on both. */
const ADMISSION_BLOCKS = 6;
const ADMISSION_CALLS = 500;

export async function runServiceBench(): Promise<BenchRow[]> {
  const dir = mkdtempSync(join(tmpdir(), 'flowsync-bench-'));
  // The real `flowsync serve` in its own process, logging at info as it does by default: the client's work
  // (building and sending bodies) does not share the service's event loop, as with a real agent.
  // Members' rate limit off: a sequential loop of 2,000 calls a second is what it exists to stop (100 a second); the
  // rows below measure what a member's token costs at admission (its lookup and the member's role), not the limit.
  const service = await startServeProcess(join(dir, 'service.db'), join(dir, 'service.log'), [], undefined, {
    FLOWSYNC_MEMBER_RATE: '0',
  });
  const tokens = service.tokens;
  const pool = new Pool(service.url, { connections: 4, pipelining: 1, keepAliveTimeout: 30_000 });
  const post = functionCaller([pool]);

  try {
    // Bodies are built before the clock starts: hashing 1 KiB files is the agent's work, not the service's.
    const batches = fileBatches(BATCHES + 2);
    const user = `Bearer ${tokens.user}`;
    const syncBatch = (flows: unknown) =>
      post('svc/flow_def/action/sync_batch/run', { repo_owner: 'bench', repo_name: 'repo', flows }, user);

    for (const warm of batches.splice(0, 2)) await syncBatch(warm);
    const ingestStart = performance.now();
    // Two batches in flight, as the agent's uploader sends them.
    let next = 0;
    await Promise.all(
      [0, 1].map(async () => {
        while (next < batches.length) await syncBatch(batches[next++]);
      }),
    );
    const ingestSeconds = (performance.now() - ingestStart) / 1000;
    const filesPerSecond = (BATCHES * FLOWS_PER_BATCH * FILES_PER_FLOW) / ingestSeconds;

    // Every file edited once, each write carrying its base (what flowsync's agent sends to its own service): the
    // service checks each base, keeps the version it replaces, and the database grows by the history.
    const dbBytes = () =>
      ['service.db', 'service.db-wal'].reduce(
        (sum, name) => sum + (statSync(join(dir, name), { throwIfNoEntry: false })?.size ?? 0),
        0,
      );
    const checkpoint = () => post('svc/flow_def/public/capabilities', {}, user);
    await checkpoint();
    const bytesBefore = dbBytes();
    const edits = batches.map((flows) =>
      flows.map((flow) => ({
        flow_path: flow.flow_path,
        files: flow.files.map((file) => {
          const content = randomBytes(384).toString('base64') + '\n'.repeat(512);
          return {
            path: file.path,
            content,
            hash: createHash('sha256').update(content).digest('hex'),
            base_hash: file.hash,
          };
        }),
      })),
    );
    const editStart = performance.now();
    next = 0;
    await Promise.all(
      [0, 1].map(async () => {
        while (next < edits.length) await syncBatch(edits[next++]);
      }),
    );
    const editSeconds = (performance.now() - editStart) / 1000;
    const editsPerSecond = (BATCHES * FLOWS_PER_BATCH * FILES_PER_FLOW) / editSeconds;
    const bytesPerVersion = (dbBytes() - bytesBefore) / (BATCHES * FLOWS_PER_BATCH * FILES_PER_FLOW);
    // A busy team: 10 developers, 100 saves of a 1 KiB flow file a day each, 30 days kept.
    const teamMonth = (bytesPerVersion * 10 * 100 * 30) / (1024 * 1024);

    const admin = `Admin ${tokens.admin}`;
    await post(
      'svc/tracker/private/workflow_state_cache_upsert',
      { team_id: 'ENG', states: [{ id: 's1', name: 'Todo', normalized_name: 'todo' }] },
      admin,
    );
    const { p50, p99 } = await sequentialLatency(
      () => post('svc/tracker/private/workflow_state_cache_get_by_team', { team_id: 'ENG' }, admin),
      LATENCY_CALLS,
      300,
    );

    // A read each writer makes (list_flows of a repository of 30 flows), with the shared user token and with a
    // member's token (issue 48: admission looks the token up by its id and checks the member's role).
    const member = `Bearer ${await memberToken(service.url, admin, 'bench', 'write')}`;
    const listFlows = (auth: string) =>
      post('svc/flow_def/public/list_flows', { repo_owner: 'bench', repo_name: 'repo' }, auth);
    const shared: number[] = [];
    const members: number[] = [];
    for (let block = 0; block < ADMISSION_BLOCKS; block++) {
      for (const [auth, into] of [
        [user, shared],
        [member, members],
      ] as const) {
        const { p50: blockP50 } = await sequentialLatency(() => listFlows(auth), ADMISSION_CALLS, 50);
        into.push(blockP50);
      }
    }
    const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;
    const sharedP50 = median(shared);
    const memberP50 = median(members);

    return [
      {
        metric: `sync_batch ingest (${BATCHES} batches of ${FLOWS_PER_BATCH} flows × ${FILES_PER_FLOW} files of 1 KiB, 2 in flight)`,
        value: `${Math.round(filesPerSecond).toLocaleString('en')} files/s`,
        target: '≥ 20,000 files/s',
        met: filesPerSecond >= 20_000,
      },
      {
        metric: `sync_batch edits with bases and history (${BATCHES} batches of ${FLOWS_PER_BATCH * FILES_PER_FLOW} files changed, 2 in flight)`,
        value: `${Math.round(editsPerSecond).toLocaleString('en')} files/s`,
        target: '≥ 20,000 files/s',
        met: editsPerSecond >= 20_000,
      },
      {
        metric: 'history: disk per kept version of a 1 KiB file (database and WAL growth / versions)',
        value: `${(bytesPerVersion / 1024).toFixed(2)} KiB`,
        target: '',
        met: null,
      },
      {
        metric: 'history of a busy team: 10 developers × 100 saves a day × 30 days of 1 KiB files',
        value: `${teamMonth.toFixed(0)} MiB`,
        target: '≤ 256 MiB (the default cap)',
        met: teamMonth <= 256,
      },
      {
        metric: `small call p50 (workflow_state_cache_get_by_team, ${LATENCY_CALLS} sequential, keep-alive)`,
        value: `${p50.toFixed(3)} ms`,
        target: '≤ 1 ms',
        met: p50 <= 1,
      },
      { metric: 'small call p99', value: `${p99.toFixed(3)} ms`, target: '', met: null },
      {
        metric: `list_flows p50 with the shared user token (median of ${ADMISSION_BLOCKS} blocks of ${ADMISSION_CALLS})`,
        value: `${sharedP50.toFixed(3)} ms`,
        target: '',
        met: null,
      },
      {
        metric: "list_flows p50 with a member's token, blocks alternated with the row above",
        value: `${memberP50.toFixed(3)} ms (${(memberP50 / sharedP50).toFixed(2)}×)`,
        target: '≤ 1.1× the shared token (within noise)',
        met: memberP50 <= sharedP50 * 1.1,
      },
    ];
  } finally {
    await pool.close();
    await service.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  printTable('service (bench/service.ts)', await runServiceBench());
}
