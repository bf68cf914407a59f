import Database from 'better-sqlite3';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { startAgentProcess, userEnv, type AgentProcess } from '../support/agent-process.ts';
import { startEngine, type EngineHarness } from '../support/engine.ts';
import { startFaultProxy } from '../support/fault-proxy.ts';
import { diskTree, eventually, makeRepo, serviceTree, type TestRepo } from '../support/repo.ts';
import { startServeProcess, type ServeProcess } from '../support/serve-process.ts';
import { readDatabase, startTestService } from '../support/service.ts';
import { unreadBytesAt } from '../support/socket-queue.ts';

let repo: TestRepo | null = null;
let service: ServeProcess | null = null;
const agents: AgentProcess[] = [];
let harness: EngineHarness | null = null;
const cleanups: (() => Promise<void>)[] = [];

afterEach(async () => {
  await harness?.close();
  harness = null;
  for (const cleanup of cleanups.splice(0)) await cleanup();
  for (const agent of agents.splice(0)) {
    agent.signal('SIGKILL');
    await agent.exited;
  }
  await service?.stop();
  service = null;
  repo?.cleanup();
  repo = null;
});

/** `flowsync start` as a user runs it, with its own HOME, against the service in its own process. */
function startAgent(tree: TestRepo, serve: ServeProcess): AgentProcess {
  const agent = startAgentProcess(['start', tree.root], userEnv(join(tree.dir, 'home'), serve));
  agents.push(agent);
  return agent;
}

async function kill(agent: AgentProcess): Promise<void> {
  agent.signal('SIGKILL');
  await agent.exited;
  agents.splice(agents.indexOf(agent), 1);
}

describe('an answer lost with the agent (the service committed, the agent died before hearing it)', () => {
  it('a file deleted meanwhile is deleted on the service at the next start', async () => {
    const tree = makeRepo({ 'flows/a/keep.yaml': 'keep\n', 'flows/b/other.yaml': 'other\n' });
    repo = tree;
    const dbPath = join(tree.dir, 'service.db');
    const serve = await startServeProcess(dbPath, join(tree.dir, 'service.log'));
    service = serve;
    const stored = () => serviceTree(readDatabase(dbPath), 'local', 'repo');

    const first = startAgent(tree, serve);
    await first.waitFor(/Watching 1 repository/);
    await eventually(() => expect(stored()).toEqual(diskTree(tree.root)));

    // The service freezes; a new file's batch reaches it (its bytes wait in the socket), and the agent dies.
    serve.signal('SIGSTOP');
    tree.write('flows/a/lost.yaml', 'sent, never acknowledged\n');
    await eventually(() => expect(unreadBytesAt(serve.port)).toBeGreaterThan(0));
    await kill(first);
    serve.signal('SIGCONT');
    await eventually(() => expect(stored()['flows/a/lost.yaml']).toBe('sent, never acknowledged\n'));

    tree.remove('flows/a/lost.yaml');
    const second = startAgent(tree, serve);
    await second.waitFor(/Watching 1 repository/);
    await eventually(() => expect(stored()).toEqual(diskTree(tree.root)));
    expect(stored()).toEqual({ 'flows/a/keep.yaml': 'keep\n', 'flows/b/other.yaml': 'other\n' });
  }, 90_000);

  it('a flow folder deleted meanwhile (its last file) is emptied on the service too', async () => {
    const tree = makeRepo({ 'flows/a/keep.yaml': 'keep\n' });
    repo = tree;
    const dbPath = join(tree.dir, 'service.db');
    const serve = await startServeProcess(dbPath, join(tree.dir, 'service.log'));
    service = serve;
    const stored = () => serviceTree(readDatabase(dbPath), 'local', 'repo');

    const first = startAgent(tree, serve);
    await first.waitFor(/Watching 1 repository/);
    serve.signal('SIGSTOP');
    tree.write('flows/new/only.yaml', 'only\n');
    await eventually(() => expect(unreadBytesAt(serve.port)).toBeGreaterThan(0));
    await kill(first);
    serve.signal('SIGCONT');
    await eventually(() => expect(stored()['flows/new/only.yaml']).toBe('only\n'));

    tree.remove('flows/new');
    const second = startAgent(tree, serve);
    await second.waitFor(/Watching 1 repository/);
    await eventually(() => expect(stored()).toEqual({ 'flows/a/keep.yaml': 'keep\n' }));
  }, 90_000);
});

describe('an answer lost on the way (a gateway time-out after the service committed)', () => {
  it('the agent keeps running, and a file deleted meanwhile is deleted on the service', async () => {
    const tree = makeRepo({ 'flows/a/keep.yaml': 'keep\n' });
    repo = tree;
    const svc = await startTestService();
    const proxy = await startFaultProxy(svc.url);
    cleanups.push(
      () => proxy.close(),
      () => svc.close(),
    );
    harness = startEngine(tree, proxy.url, svc.tokens.user);
    await harness.engine.start();
    const stored = () => serviceTree(svc.read, 'acme', 'app');
    await eventually(() => expect(stored()).toEqual(diskTree(tree.root)));

    proxy.loseAnswer = (path) => path.includes('sync_batch');
    tree.write('flows/a/lost.yaml', 'stored, answer lost\n');
    await eventually(() => expect(stored()['flows/a/lost.yaml']).toBe('stored, answer lost\n'));
    // The round whose answer was lost failed (offline), or was already settled by the service's listing.
    await eventually(() =>
      expect(
        harness!.engine.status().phase === 'offline' ||
          proxy.requests.some((path) => path.includes('list_files')),
      ).toBe(true),
    );
    tree.remove('flows/a/lost.yaml');
    proxy.loseAnswer = () => false;
    await eventually(() => expect(stored()).toEqual({ 'flows/a/keep.yaml': 'keep\n' }));
    await eventually(() =>
      expect(harness!.engine.status()).toMatchObject({ phase: 'idle', counts: { pending: 0 } }),
    );
  });
});

describe('a stale local hash in the state (state and disk disagree on a file)', () => {
  it('converges to the disk content with a bounded number of requests, not a loop', async () => {
    const tree = makeRepo({ 'flows/a/main.yaml': 'v1\n', 'flows/b/other.yaml': 'other\n' });
    repo = tree;
    const dbPath = join(tree.dir, 'service.db');
    const logPath = join(tree.dir, 'service.log');
    const serve = await startServeProcess(dbPath, logPath);
    service = serve;
    const stored = () => serviceTree(readDatabase(dbPath), 'local', 'repo');

    const first = startAgent(tree, serve);
    await first.waitFor(/Watching 1 repository/);
    await eventually(() => expect(stored()).toEqual(diskTree(tree.root)));
    await kill(first);

    // The state says the file has content it does not have (size and mtime still match, so no rehash).
    const state = new Database(join(tree.dir, 'home/.local/share/flowsync/state.db'));
    state
      .prepare(`UPDATE files SET local_hash = ? WHERE flow_path = 'flows/a' AND path = 'main.yaml'`)
      .run('0'.repeat(64));
    state.close();

    // Requests that carried flow content, counted in the service's own log.
    const uploads = () =>
      readFileSync(logPath, 'utf8')
        .split('\n')
        .filter((line) => line.includes('"msg":"call"') && /sync_batch|update_file/.test(line)).length;
    const before = uploads();
    const second = startAgent(tree, serve);
    await second.waitFor(/Watching 1 repository/);
    await second.waitFor(/in sync/);
    expect(stored()).toEqual(diskTree(tree.root));
    // Settled: a change is still sent as usual, in one request, and nothing else follows it.
    tree.write('flows/b/other.yaml', 'other v2\n');
    await eventually(() => expect(stored()).toEqual(diskTree(tree.root)));
    // That edit's round, and only one, names it (a round of three files or fewer names its files).
    await second.waitFor(/local\/repo: flows\/b\/other\.yaml updated in \d+ ms/);
    expect(uploads() - before).toBeLessThanOrEqual(4);
  }, 90_000);
});
