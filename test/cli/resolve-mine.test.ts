import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { NO_KEYCHAIN, userEnv, writeAgentConfig } from '../support/agent-process.ts';
import { runFlowsync } from '../support/cli.ts';
import { makeRepo, serviceTree, type TestRepo } from '../support/repo.ts';
import { startServeProcess, type ServeProcess } from '../support/serve-process.ts';
import { readDatabase } from '../support/service.ts';

/**
 * Issue 42 point 7: `flowsync resolve --mine` with no agent running said "yours is sent on top of the service's"
 * of a file it had only queued (the agent it opened for the command closes before any round). It says queued, and
 * when it is sent; the service keeps the teammate's version until then.
 */
let serve: ServeProcess | null = null;
const repos: TestRepo[] = [];

afterEach(async () => {
  await serve?.stop();
  serve = null;
  for (const repo of repos.splice(0)) repo.cleanup();
});

describe('resolve --mine without a running agent', () => {
  it('says the file is queued, not sent, and the next sync sends it', async () => {
    const a = makeRepo({ 'flows/ci/build.yml': 'build: 1\n' });
    const b = makeRepo({ 'flows/ci/build.yml': 'build: 1\n' });
    repos.push(a, b);
    serve = await startServeProcess(join(a.dir, 'service.db'), join(a.dir, 'service.log'));
    const stored = () =>
      serviceTree(readDatabase(join(a.dir, 'service.db')), 'acme', 'app')['flows/ci/build.yml'];
    const envOf = (repo: TestRepo, home: string) => {
      const env = { ...userEnv(join(repo.dir, home), serve!), ...NO_KEYCHAIN };
      writeAgentConfig(env, [{ path: repo.root, owner: 'acme', name: 'app' }]);
      return env;
    };
    const alice = envOf(a, 'alice');
    const bob = envOf(b, 'bob');
    expect((await runFlowsync(['sync', a.root], { env: alice })).code).toBe(0);
    expect((await runFlowsync(['sync', b.root], { env: bob })).code).toBe(0);
    b.write('flows/ci/build.yml', 'build: bob\n');
    expect((await runFlowsync(['sync', b.root], { env: bob })).code).toBe(0);
    a.write('flows/ci/build.yml', 'build: alice\n');
    expect((await runFlowsync(['sync', a.root], { env: alice })).code).toBe(4);

    const mine = await runFlowsync(['resolve', join(a.root, 'flows/ci/build.yml'), '--mine'], { env: alice });
    expect(mine.code, mine.stderr).toBe(0);
    expect(mine.stdout).toBe(
      "flows/ci/build.yml: yours is queued, to be sent on top of the service's when the agent runs " +
        '(`flowsync start`, or `flowsync sync` once)\n',
    );
    expect(stored()).toBe('build: bob\n');
    const sent = await runFlowsync(['sync', a.root], { env: alice });
    expect(sent.code, sent.stderr).toBe(0);
    expect(stored()).toBe('build: alice\n');
  }, 90_000);
});
