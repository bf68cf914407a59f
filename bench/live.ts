/**
 * A live team (issue 47): how soon a teammate's edit is seen, and what holding the agents' calls costs the service
 * beside the look every 45 s it replaces.
 * - edit → seen: two real agents (`flowsync start`, a HOME each) on one real `flowsync serve`; Bob edits one file at
 *   a time, 50 times, and Ada's window bridge is read every 10 ms until her status counts it as newer on the service.
 * - the service's CPU with 50 agents idle: each holding its call to `changes` (answered after 25 s with nothing, and
 *   held again), beside each asking `list_flows` every 45 s, on a repository of 100,000 files.
 * - 1,000 agents idle on one process: CPU, memory, and one write told to all of them.
 * Run: npm run bench -- live
 */
import { createHash } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Pool } from 'undici';
import { createClient, type RemoteClient } from '../src/client/index.ts';
import { SERVICE_CHECK_MS } from '../src/sync/index.ts';
import { agentStatusSchema, connectToBridge } from '../src/window/index.ts';
import { startAgentProcess, type AgentProcess } from '../test/support/agent-process.ts';
import { startServeProcess, type ServeProcess } from '../test/support/serve-process.ts';
import { startTeam } from '../test/support/team.ts';
import { cpuSeconds, rssMb } from './proc.ts';
import { percentile, type BenchRow } from './report.ts';
import { fileBatches, functionCaller } from './service-calls.ts';

const EDITS = 50;
const IDLE_AGENTS = 50;
const MANY_AGENTS = 1_000;
const IDLE_SECONDS = 50;
const REPO = { repo_owner: 'bench', repo_name: 'repo' };

export async function runLiveBench(): Promise<BenchRow[]> {
  const seen = await editToSeen();
  // Said as it goes: the cost part takes minutes (100,000 files ingested, then two idle windows).
  console.error(`edit → seen, ${EDITS} edits (ms, sorted): ${seen.map((ms) => ms.toFixed(0)).join(' ')}`);
  const cost = await idleCost();
  const p50 = percentile(seen, 50);
  const max = seen.at(-1)!;
  return [
    {
      metric: `edit → seen by the teammate's status, ${EDITS} edits: p50`,
      value: ms(p50),
      target: '≤ 1000 ms',
      met: p50 <= 1000,
    },
    { metric: 'edit → seen by the teammate: max', value: ms(max), target: '≤ 2000 ms', met: max <= 2000 },
    {
      metric: 'the same with the look every 45 s ±20 % (no feed)',
      value: '0-54 s (issue 47 measured 7, 27, 38 s)',
      target: '',
      met: null,
    },
    { metric: 'repository of the cost rows', value: '100,000 files in 1,000 flows', target: '', met: null },
    {
      metric: `service CPU, ${IDLE_AGENTS} agents looking every 45 s (list_flows)`,
      value: `${cost.pollPercent.toFixed(2)} % of one core`,
      target: '',
      met: null,
    },
    {
      metric: 'service CPU at rest, nobody calling (taken off the two rows below)',
      value: `${cost.restPercent.toFixed(3)} % of one core`,
      target: '',
      met: null,
    },
    {
      metric: `service CPU, ${IDLE_AGENTS} agents idle on the live feed`,
      value: `${cost.livePercent.toFixed(3)} % of one core`,
      target: 'below the looks',
      met: cost.livePercent < cost.pollPercent,
    },
    {
      metric: `service CPU, ${MANY_AGENTS.toLocaleString('en')} agents idle on one process`,
      value: `${cost.manyPercent.toFixed(2)} % of one core`,
      target: '< 5 %',
      met: cost.manyPercent < 5,
    },
    {
      metric: `service memory for ${MANY_AGENTS.toLocaleString('en')} held calls`,
      value: `${cost.manyRssMb.toFixed(0)} MB more`,
      target: '',
      met: null,
    },
    {
      metric: `one write told to ${IDLE_AGENTS} idle agents: answered, and within`,
      value: `${cost.fanOutAnswered}, ${ms(cost.fanOutMs)}`,
      target: '',
      met: null,
    },
    {
      metric: 'held calls that failed (and were sent again)',
      value: String(cost.failed),
      target: '0',
      met: cost.failed === 0,
    },
  ];
}

const ms = (value: number) => `${value.toFixed(0)} ms`;

/** Bob edits, Ada's status says it: the time between, sorted. */
async function editToSeen(): Promise<number[]> {
  const files = Object.fromEntries(
    Array.from({ length: EDITS }, (_, i) => [`flows/ci/f${String(i).padStart(2, '0')}.yml`, `step: ${i}\n`]),
  );
  // Their look every 45 s set to ten minutes: what Ada sees comes through the feed.
  const team = await startTeam(files, { serviceCheckMs: 600_000, live: true });
  const agents: AgentProcess[] = [];
  try {
    const ada = team.person('ada');
    const bob = team.person('bob');
    for (const person of [ada, bob]) {
      const agent = startAgentProcess(['start', person.root], person.env);
      agents.push(agent);
      await agent.waitFor(/Watching 1 repository/, 120_000);
    }
    const bridge = await adaBridge(join(team.dir, 'ada/home/.local/share/flowsync/agent.lock'));
    const behind = async () =>
      agentStatusSchema.parse(await bridge.call('status', {})).repositories[0]?.counts.behind ?? 0;
    const samples: number[] = [];
    for (let i = 0; i < EDITS; i++) {
      const start = performance.now();
      bob.write(`flows/ci/f${String(i).padStart(2, '0')}.yml`, `step: ${i} by bob\n`);
      while ((await behind()) < i + 1) {
        if (performance.now() - start > 120_000) throw new Error(`edit ${i} not seen within 120 s`);
        await new Promise((resolve) => setTimeout(resolve, 10));
      }
      samples.push(performance.now() - start);
    }
    return samples.sort((a, b) => a - b);
  } finally {
    for (const agent of agents) {
      agent.signal('SIGINT');
      await agent.exitWithin(20_000).catch(() => undefined);
    }
    await team.close();
  }
}

async function adaBridge(lockPath: string) {
  const { readFileSync } = await import('node:fs');
  const lock = JSON.parse(readFileSync(lockPath, 'utf8')) as { bridge: string };
  return connectToBridge(lock.bridge);
}

/** What the looks and the held calls cost the service, on a repository of 100,000 files. */
async function idleCost() {
  const dir = mkdtempSync(join(tmpdir(), 'flowsync-bench-live-'));
  const service = await startServeProcess(join(dir, 'service.db'), join(dir, 'service.log'));
  const pool = new Pool(service.url, { connections: 4, pipelining: 1 });
  const post = functionCaller([pool]);
  const user = `Bearer ${service.tokens.user}`;
  const clients: RemoteClient[] = [];
  const holders: Holder[] = [];
  const client = () => {
    const made = createClient({ baseUrl: service.url, auth: { userToken: service.tokens.user } });
    clients.push(made);
    return made;
  };
  try {
    for (const flows of fileBatches(100))
      await post('svc/flow_def/action/sync_batch/run', { ...REPO, flows }, user);

    // The looks: 50 agents' list_flows, four times each, the service's CPU per look spread over 45 s.
    const lookers = Array.from({ length: IDLE_AGENTS }, client);
    const before = cpuSeconds([service.pid]);
    for (let round = 0; round < 4; round++) await Promise.all(lookers.map((c) => c.flowDef.listFlows(REPO)));
    const perLookMs = ((cpuSeconds([service.pid]) - before) * 1000) / (IDLE_AGENTS * 4);
    const pollPercent = (perLookMs * IDLE_AGENTS * 100) / SERVICE_CHECK_MS;

    // What the service spends with nobody calling (its WAL checkpoint after the ingest, a collection at rest,
    // the machine's other load on its caches), measured over the same window and taken off the held rows.
    await new Promise((resolve) => setTimeout(resolve, 5_000));
    const restBefore = cpuSeconds([service.pid]);
    const restStart = performance.now();
    await new Promise((resolve) => setTimeout(resolve, IDLE_SECONDS * 1000));
    const restPercent =
      ((cpuSeconds([service.pid]) - restBefore) * 1000 * 100) / (performance.now() - restStart);

    const token = service.tokens.user;
    const hold = () => {
      const made = holder(service.url, token);
      holders.push(made);
      return made;
    };
    const failed = { count: 0 };
    // The 50: idle for IDLE_SECONDS, after one write told to all of them (how long until every one was answered).
    const fanOut = { ms: 0, answered: '' };
    const livePercent = await heldFor(
      service,
      Array.from({ length: IDLE_AGENTS }, hold),
      failed,
      async (answered) => {
        const content = 'told\n';
        const start = performance.now();
        await post(
          'svc/flow_def/action/sync_batch/run',
          {
            ...REPO,
            flows: [{ flow_path: 'flows/told', files: [{ path: 'a.yml', content, hash: sha(content) }] }],
          },
          user,
        );
        const { told, answered: got } = await answered();
        fanOut.ms = performance.now() - start;
        fanOut.answered = `${got} of ${told}`;
      },
    );
    // The thousand: idle, their calls held and held again; the service's CPU and memory for them.
    const rssBefore = rssMb([service.pid]);
    const manyPercent = await heldFor(service, Array.from({ length: MANY_AGENTS }, hold), failed);
    return {
      pollPercent,
      restPercent,
      livePercent: Math.max(0, livePercent - restPercent),
      manyPercent: Math.max(0, manyPercent - restPercent),
      manyRssMb: rssMb([service.pid]) - rssBefore,
      fanOutMs: fanOut.ms,
      fanOutAnswered: fanOut.answered,
      failed: failed.count,
    };
  } finally {
    await Promise.all(clients.map((c) => c.close().catch(() => undefined)));
    await Promise.all(holders.map((h) => h.close().catch(() => undefined)));
    await pool.close();
    await service.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

const sha = (text: string) => createHash('sha256').update(text).digest('hex');

/** An idle agent's feed, as the service sees it: one connection, one held call to `changes` after another. */
interface Holder {
  changes(after: string | null, waitMs: number): Promise<{ cursor: string; changes: unknown[] }>;
  close(): Promise<void>;
}

/**
 * A holder on a connection of its own. Not the agent's client: it checks the owner of a loopback listener in the
 * kernel's socket table at each connection it opens, which a thousand clients in one process make quadratic (1,000
 * first calls: 40 s, 826 timed out); a thousand agents on a thousand machines open one connection each.
 */
function holder(url: string, token: string): Holder {
  const pool = new Pool(url, { connections: 1, pipelining: 1, headersTimeout: 60_000, bodyTimeout: 60_000 });
  const post = functionCaller([pool]);
  return {
    async changes(after, waitMs) {
      const text = await post(
        'svc/flow_def/public/changes',
        { repos: [REPO], after, wait_ms: waitMs },
        `Bearer ${token}`,
      );
      return (JSON.parse(text) as { value: { cursor: string; changes: unknown[] } }).value;
    },
    close: () => pool.close(),
  };
}

/**
 * These agents each hold a call to `changes` as an agent's feed does, for IDLE_SECONDS: the service's CPU over that
 * time as a share of one core (after `meanwhile`, run once all are held, which may wait for answers with changes).
 */
async function heldFor(
  service: ServeProcess,
  holders: Holder[],
  failed: { count: number },
  meanwhile?: (answered: () => Promise<{ told: number; answered: number }>) => Promise<void>,
): Promise<number> {
  let stop = false;
  let withChanges = 0;
  let holdingNow = 0;
  const waiters: (() => void)[] = [];
  const holding = holders.map(async (agent, at) => {
    // Agents come up over a few seconds, as a team's do (a thousand connecting in one instant is a bench's herd).
    await new Promise((resolve) => setTimeout(resolve, (at * 5_000) / holders.length));
    let after: string | null = null;
    while (!stop) {
      try {
        const answer = await agent.changes(after, after === null ? 0 : 25_000);
        if (after !== null && answer.changes.length > 0) {
          withChanges++;
          for (const wake of waiters.splice(0)) wake();
        }
        if (after === null) holdingNow++;
        after = answer.cursor;
      } catch {
        // As the agent's feed does: counted, and sent again after a second.
        failed.count++;
        await new Promise((resolve) => setTimeout(resolve, 1_000));
      }
    }
  });
  await new Promise((resolve) => setTimeout(resolve, 8_000));
  if (meanwhile)
    await meanwhile(async () => {
      // Those holding a cursor from before the write (a holder whose first call failed holds one from after it).
      const told = holdingNow;
      const deadline = performance.now() + 60_000;
      while (withChanges < told && performance.now() < deadline)
        await new Promise<void>((resolve) => {
          waiters.push(resolve);
          setTimeout(resolve, 1_000);
        });
      return { told, answered: withChanges };
    });
  const before = cpuSeconds([service.pid]);
  const started = performance.now();
  await new Promise((resolve) => setTimeout(resolve, IDLE_SECONDS * 1000));
  const percent = ((cpuSeconds([service.pid]) - before) * 1000 * 100) / (performance.now() - started);
  stop = true;
  // Each ends at its next answer (within 25 s): not waited for here; their connections are closed after.
  void Promise.allSettled(holding);
  return percent;
}
