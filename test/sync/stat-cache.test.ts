import { execFileSync } from 'node:child_process';
import { appendFileSync, mkdirSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterEach, describe, expect, it } from 'vitest';
import { NO_KEYCHAIN, startAgentProcess, userEnv, type AgentProcess } from '../support/agent-process.ts';
import { diskTree, eventually, makeRepo, serviceTree, type TestRepo } from '../support/repo.ts';
import { startServeProcess, type ServeProcess } from '../support/serve-process.ts';
import { readDatabase } from '../support/service.ts';

/**
 * Issue 21: the cache that spares re-reading unchanged files must not be fooled, and a file caught in the middle
 * of a write must not be taken for what it is not. Real agent processes, a real service in its own process.
 */

let tree: TestRepo | null = null;
let serve: ServeProcess | null = null;
let agent: AgentProcess | null = null;

afterEach(async () => {
  if (agent) {
    agent.signal('SIGTERM');
    await agent.exitWithin();
  }
  agent = null;
  await serve?.stop();
  serve = null;
  tree?.cleanup();
  tree = null;
});

async function startService(): Promise<() => Record<string, string>> {
  const dir = join(tree!.dir, 'service');
  mkdirSync(dir);
  serve = await startServeProcess(join(dir, 'service.db'), join(dir, 'service.log'));
  const read = readDatabase(join(dir, 'service.db'));
  return () => serviceTree(read, 'local', 'repo');
}

function startAgent(): AgentProcess {
  agent = startAgentProcess(['start', tree!.root], {
    ...userEnv(join(tree!.dir, 'home'), serve!),
    ...NO_KEYCHAIN,
  });
  return agent;
}

describe('the stat cache', () => {
  it(
    'sends a same-size edit made while the agent was stopped, its mtime set back with touch -d',
    { timeout: 120_000 },
    async () => {
      tree = makeRepo({ 'flows/x/main.yaml': 'value: 1\n', 'flows/x/other.yaml': 'other\n' });
      const path = join(tree.root, 'flows/x/main.yaml');
      // An hour ago, to the second: a time `touch -d` can put back exactly (mtimeMs equal to the last digit).
      const hourAgo = `@${Math.floor(Date.now() / 1000) - 3600}`;
      execFileSync('touch', ['-d', hourAgo, path]);
      const stored = await startService();
      await startAgent().waitFor(/Watching 1 repository/);
      await eventually(() => expect(stored()).toEqual(diskTree(tree!.root)));
      agent!.signal('SIGINT');
      expect(await agent!.exitWithin()).toBe(0);
      agent = null;

      // The same size, and the mtime put back to what the agent saw: only ctime and the content tell.
      const before = statSync(path);
      writeFileSync(path, 'value: 2\n');
      execFileSync('touch', ['-d', hourAgo, path]);
      const after = statSync(path);
      expect([after.size, after.mtimeMs]).toEqual([before.size, before.mtimeMs]);

      await startAgent().waitFor(/Watching 1 repository/);
      await eventually(() => expect(stored()['flows/x/main.yaml']).toBe('value: 2\n'));
      expect(stored()).toEqual(diskTree(tree.root));
    },
  );
});

describe('a write paused inside a multi-byte character', () => {
  it(
    'never loses the file on the service, and ends with the full content',
    { timeout: 120_000 },
    async () => {
      tree = makeRepo({ 'flows/x/notes.md': 'price: 1\n', 'flows/x/other.yaml': 'other\n' });
      const stored = await startService();
      await startAgent().waitFor(/Watching 1 repository/);
      await eventually(() => expect(stored()).toEqual(diskTree(tree!.root)));

      // "€" is E2 82 AC in UTF-8: the first byte alone is not UTF-8 until the other two arrive.
      const path = join(tree.root, 'flows/x/notes.md');
      writeFileSync(path, Buffer.concat([Buffer.from('price: 2 '), Buffer.from([0xe2])]));
      // Through the pause, the service keeps the file (its last version); polled, not slept past.
      const pauseEnds = Date.now() + 3000;
      while (Date.now() < pauseEnds) {
        expect(stored()['flows/x/notes.md']).toBeDefined();
        await sleep(20);
      }
      appendFileSync(path, Buffer.from([0x82, 0xac, 0x0a]));

      await eventually(() => expect(stored()['flows/x/notes.md']).toBe('price: 2 €\n'));
      expect(stored()).toEqual(diskTree(tree.root));
      expect(agent!.output()).not.toMatch(/binary/);

      // Cut off for good (its last write long ago): binary, as any file that is not UTF-8.
      const cut = join(tree.root, 'flows/x/cut.md');
      writeFileSync(cut, Buffer.concat([Buffer.from('price: 3 '), Buffer.from([0xe2])]));
      execFileSync('touch', ['-d', '1 hour ago', cut]);
      await agent!.waitFor(/flows\/x\/cut\.md not sent: binary/);
      expect(stored()['flows/x/cut.md']).toBeUndefined();
    },
  );
});
