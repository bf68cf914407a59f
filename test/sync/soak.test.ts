import { renameSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterEach, describe, expect, it } from 'vitest';
import {
  configWithoutDeletionHold,
  startAgentProcess,
  userEnv,
  type AgentProcess,
} from '../support/agent-process.ts';
import { editStorm, flowFiles, seededRandom } from '../support/edit-storm.ts';
import { diskTree, eventually, makeRepo, serviceTree, type TestRepo } from '../support/repo.ts';
import { startServeProcess, type ServeProcess } from '../support/serve-process.ts';
import { readDatabase } from '../support/service.ts';
import { unreadBytesAt } from '../support/socket-queue.ts';

let repo: TestRepo | null = null;
let agent: AgentProcess | null = null;
const services: ServeProcess[] = [];

afterEach(async () => {
  if (agent) {
    agent.signal('SIGKILL');
    await agent.exited;
    agent = null;
  }
  await Promise.all(services.splice(0).map((s) => s.stop()));
  repo?.cleanup();
  repo = null;
});

describe('the outbox under every fault at once (issue 9, "done when")', () => {
  it('after 1,100 random edits, 20 kill -9s, a 15 s outage, a lost answer and a flow root swapped, the service holds exactly the disk', async () => {
    const tree = makeRepo(flowFiles(20, 5));
    repo = tree;
    const dbPath = join(tree.dir, 'service.db');
    const logPath = join(tree.dir, 'service.log');
    let service = await startServeProcess(dbPath, logPath);
    services.push(service);
    const { port, tokens } = service;
    const url = service.url;
    const env = userEnv(join(tree.dir, 'home'), { url, tokens });
    // Random deletions, a quarter of the files at times: the held-deletion guard has tests of its own.
    configWithoutDeletionHold(env, tree.root);
    const stored = () => serviceTree(readDatabase(dbPath), 'local', 'repo');
    const random = seededRandom(2026);
    let kills = 0;
    const restart = async () => {
      if (agent) {
        agent.signal('SIGKILL');
        await agent.exited;
        kills++;
      }
      agent = startAgentProcess(['start', tree.root], env);
    };
    /** Edits paced at about 200 a second, the agent killed at a random moment every `killEvery` edits. */
    const storm = (edits: number, killEvery: number) =>
      editStorm(tree, edits, random, async (edit) => {
        if (edit % 10 === 0) await sleep(50);
        if (edit % killEvery === 0) {
          await sleep(random() * 1000);
          await restart();
        }
      });

    await restart();
    await storm(400, 40); // 10 kills

    // A lost answer: the service freezes with a batch in its socket, the agent dies, the flow goes (a flow of
    // its own, so that no later edit to it happens to send a full listing that would hide the fault).
    await agent!.waitFor(/Watching 1 repository/, 60_000);
    await eventually(() => expect(stored()).toEqual(diskTree(tree.root)), 60_000);
    service.signal('SIGSTOP');
    tree.write('flows/lost/only.yaml', 'sent, never acknowledged\n');
    await eventually(() => expect(unreadBytesAt(port)).toBeGreaterThan(0));
    await restart();
    service.signal('SIGCONT');
    await eventually(() => expect(stored()['flows/lost/only.yaml']).toBe('sent, never acknowledged\n'));
    tree.remove('flows/lost');

    // A watcher fault: the flow root moved away and put back within a second (what `rm -rf flows && git checkout
    // -- flows` does to the watches), then edits at once; heard, or found by the rescan of a root that came back.
    await eventually(() => expect(stored()).toEqual(diskTree(tree.root)), 60_000);
    renameSync(join(tree.root, 'flows'), join(tree.dir, 'flows-away'));
    await sleep(random() * 500);
    renameSync(join(tree.dir, 'flows-away'), join(tree.root, 'flows'));
    await storm(100, 1000); // no kill: the running agent must hear these
    await eventually(() => expect(stored()).toEqual(diskTree(tree.root)), 60_000);

    // A 15 s outage, with edits and kills during it.
    await service.stop();
    const outageEnds = Date.now() + 15_000;
    await storm(300, 60); // 5 kills
    while (Date.now() < outageEnds) await sleep(100);
    service = await startServeProcess(dbPath, logPath, ['--port', String(port)]);
    services.push(service);

    await storm(300, 100); // 3 kills, and one more below
    await restart();
    expect(kills).toBe(20);
    await agent!.waitFor(/Watching 1 repository/, 60_000);
    await eventually(() => expect(stored()).toEqual(diskTree(tree.root)), 60_000);
    expect(Object.keys(stored())).not.toContain('flows/lost/only.yaml');
  }, 240_000);
});
