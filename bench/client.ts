/**
 * The client's overhead: the same small call through `createClient` (args and reply validated, baggage filled in,
 * retry bookkeeping) and through a bare `undici.request`, interleaved in the same run against `flowsync serve`.
 * Run: npm run bench -- client
 */
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { request } from 'undici';
import { createClient } from '../src/client/index.ts';
import { startServeProcess } from '../test/support/serve-process.ts';
import { percentile, printTable, type BenchRow } from './report.ts';

const ROUNDS = 6;
const CALLS_PER_ROUND = 1000;
const WARM_UP = 500;
const PATH = 'svc/tracker/private/workflow_state_cache_get_by_team';

export async function runClientBench(): Promise<BenchRow[]> {
  const dir = mkdtempSync(join(tmpdir(), 'flowsync-bench-client-'));
  const service = await startServeProcess(join(dir, 'service.db'), join(dir, 'service.log'));
  const client = createClient({ baseUrl: service.url, auth: { adminToken: service.tokens.admin } });
  const authorization = `Admin ${service.tokens.admin}`;

  const viaClient = () => client.tracker.workflowStateCacheGetByTeam({ team_id: 'ENG' });
  // What a caller without the client would write: the same body, the same parse of the reply.
  const viaUndici = async () => {
    const { statusCode, body } = await request(`${service.url}/api/run/${PATH}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization },
      body: JSON.stringify({
        args: { baggage: { trace_id: randomUUID(), traffic_type: 'external' }, team_id: 'ENG' },
      }),
    });
    const envelope = (await body.json()) as { status: string };
    if (statusCode !== 200 || envelope.status !== 'success') throw new Error(`HTTP ${statusCode}`);
    return envelope;
  };

  const timed = async (call: () => Promise<unknown>, samples: number[]) => {
    for (let i = 0; i < CALLS_PER_ROUND; i++) {
      const start = performance.now();
      await call();
      samples.push(performance.now() - start);
    }
  };

  try {
    await client.tracker.workflowStateCacheUpsert({
      team_id: 'ENG',
      states: [{ id: 's1', name: 'Todo', normalized_name: 'todo' }],
    });
    for (let i = 0; i < WARM_UP; i++) await Promise.all([viaClient(), viaUndici()]);
    const clientMs: number[] = [];
    const undiciMs: number[] = [];
    // Interleaved rounds, so a noisy neighbour slows both sides alike.
    for (let round = 0; round < ROUNDS; round++) {
      await timed(viaUndici, undiciMs);
      await timed(viaClient, clientMs);
    }
    const summary = (samples: number[]) => {
      const total = samples.reduce((sum, ms) => sum + ms, 0);
      const sorted = [...samples].sort((a, b) => a - b);
      return { perSecond: (samples.length / total) * 1000, p50: percentile(sorted, 50) };
    };
    const viaClientStats = summary(clientMs);
    const viaUndiciStats = summary(undiciMs);
    const p50Overhead = viaClientStats.p50 / viaUndiciStats.p50 - 1;
    const rateOverhead = viaUndiciStats.perSecond / viaClientStats.perSecond - 1;
    const calls = `${ROUNDS * CALLS_PER_ROUND} sequential calls of ${PATH.split('/').at(-1)}`;
    const fmt = (n: number) => Math.round(n).toLocaleString('en');
    return [
      {
        metric: `raw undici.request: calls/s (${calls})`,
        value: fmt(viaUndiciStats.perSecond),
        target: '',
        met: null,
      },
      {
        metric: 'raw undici.request: p50',
        value: `${viaUndiciStats.p50.toFixed(3)} ms`,
        target: '',
        met: null,
      },
      { metric: `client: calls/s (${calls})`, value: fmt(viaClientStats.perSecond), target: '', met: null },
      { metric: 'client: p50', value: `${viaClientStats.p50.toFixed(3)} ms`, target: '', met: null },
      {
        metric: 'client overhead, p50',
        value: `${(p50Overhead * 100).toFixed(1)} %`,
        target: '≤ 10 %',
        met: p50Overhead <= 0.1,
      },
      {
        metric: 'client overhead, calls/s',
        value: `${(rateOverhead * 100).toFixed(1)} %`,
        target: '≤ 10 %',
        met: rateOverhead <= 0.1,
      },
    ];
  } finally {
    await client.close();
    await service.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  printTable('client (bench/client.ts)', await runClientBench());
}
