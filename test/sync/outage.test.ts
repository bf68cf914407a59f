import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterEach, describe, expect, it } from 'vitest';
import type { SyncRecovery } from '../../src/sync/index.ts';
import { startAgentProcess, userEnv, type AgentProcess } from '../support/agent-process.ts';
import { editStorm, flowFiles, seededRandom } from '../support/edit-storm.ts';
import { createEngine, type EngineHarness } from '../support/engine.ts';
import { diskTree, eventually, makeRepo, serviceTree, type TestRepo } from '../support/repo.ts';
import { startServeProcess, type ServeProcess } from '../support/serve-process.ts';
import { readDatabase } from '../support/service.ts';

let repo: TestRepo | null = null;
let harness: EngineHarness | null = null;
let agent: AgentProcess | null = null;
const services: ServeProcess[] = [];

afterEach(async () => {
  await harness?.close();
  harness = null;
  if (agent) {
    agent.signal('SIGKILL');
    await agent.exited;
    agent = null;
  }
  await Promise.all(services.splice(0).map((s) => s.stop()));
  repo?.cleanup();
  repo = null;
});

/** While the service does not answer, the next try is never further away than this (docs/architecture.md: probed every 2–4 s). */
const PROBE_CEILING_MS = 5000;

describe('a 15 s outage with 1,000 edits, folder renames among them', () => {
  it('probes every few seconds while offline, then converges exactly and says it is back in sync', async () => {
    const tree = makeRepo(flowFiles(30, 5));
    repo = tree;
    const dbPath = join(tree.dir, 'service.db');
    const logPath = join(tree.dir, 'service.log');
    const first = await startServeProcess(dbPath, logPath);
    services.push(first);
    // The product's timings: back-off from 1 s to 60 s, probes every 2–4 s.
    harness = createEngine({
      root: tree.root,
      statePath: join(tree.dir, 'state.db'),
      url: first.url,
      userToken: first.tokens.user,
      clientAttempts: 2,
      // Folder renames delete hundreds of files at once: the held-deletion guard has tests of its own.
      deletionGuard: null,
    });
    const { engine } = harness;
    await engine.start();
    const stored = () => serviceTree(readDatabase(dbPath), 'acme', 'app');
    await eventually(() => expect(stored()).toEqual(diskTree(tree.root)));

    const recoveries: SyncRecovery[] = [];
    engine.on('recovered', (recovery) => recoveries.push(recovery));
    let furthest = 0;
    let offlineSeen = 0;
    const look = () => {
      const { phase, retryAt } = engine.status();
      if (phase !== 'offline') return;
      offlineSeen++;
      furthest = Math.max(furthest, (retryAt ?? Infinity) - Date.now());
    };
    engine.on('status', look);
    const watcher = setInterval(look, 50);

    await first.stop();
    const outageEnds = Date.now() + 15_000;
    await editStorm(tree, 1000, seededRandom(9), async (edit) => {
      if (edit % 10 === 0) await sleep(100);
    });
    await eventually(() => expect(engine.status().phase).toBe('offline'));
    while (Date.now() < outageEnds) await sleep(100);
    const second = await startServeProcess(dbPath, logPath, ['--port', String(first.port)]);
    services.push(second);

    await eventually(() => expect(stored()).toEqual(diskTree(tree.root)), 30_000);
    await eventually(() => expect(engine.status()).toMatchObject({ phase: 'idle', counts: { pending: 0 } }));
    clearInterval(watcher);
    expect(offlineSeen).toBeGreaterThan(0);
    expect(furthest).toBeLessThanOrEqual(PROBE_CEILING_MS);
    expect(recoveries).toHaveLength(1);
    expect(recoveries[0]!.files).toBeGreaterThan(0);
  }, 120_000);
});

describe('flowsync start after an outage', () => {
  it('prints "Back in sync: N files sent" once the service answers again', async () => {
    const tree = makeRepo({ 'flows/a/main.yaml': 'v1\n' });
    repo = tree;
    const dbPath = join(tree.dir, 'service.db');
    const logPath = join(tree.dir, 'service.log');
    const first = await startServeProcess(dbPath, logPath);
    services.push(first);
    agent = startAgentProcess(['start', tree.root], userEnv(join(tree.dir, 'home'), first));
    await agent.waitFor(/Watching 1 repository/);
    await first.stop();
    tree.write('flows/a/main.yaml', 'v2\n');
    tree.write('flows/b/new.yaml', 'new\n');
    await agent.waitFor(/local\/repo: offline, \d+ files? pending; retrying in [1-5] s/);
    services.push(await startServeProcess(dbPath, logPath, ['--port', String(first.port)]));
    await agent.waitFor(/\d\d:\d\d:\d\d local\/repo: Back in sync: 2 files sent\n/);
    expect(serviceTree(readDatabase(dbPath), 'local', 'repo')).toEqual(diskTree(tree.root));
  }, 90_000);
});
