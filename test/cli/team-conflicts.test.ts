import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import {
  NO_KEYCHAIN,
  startAgentProcess,
  userEnv,
  writeAgentConfig,
  type AgentProcess,
} from '../support/agent-process.ts';
import { runFlowsync } from '../support/cli.ts';
import { eventually, makeRepo, serviceTree, type TestRepo } from '../support/repo.ts';
import { startServeProcess, type ServeProcess } from '../support/serve-process.ts';
import { readDatabase } from '../support/service.ts';

/**
 * Issue 24 from the command line: two developers, each with a HOME of their own, on one `flowsync serve`. Alice
 * runs an agent (`flowsync start`); Bob syncs with `flowsync sync`. Nothing either did is lost, a conflict and a
 * held deletion are never "in sync", and each is settled in one command, through Alice's running agent too.
 */

let serve: ServeProcess | null = null;
let alice: AgentProcess | null = null;
const repos: TestRepo[] = [];

afterEach(async () => {
  alice?.signal('SIGINT');
  await alice?.exitWithin(10_000);
  alice = null;
  await serve?.stop();
  serve = null;
  for (const repo of repos.splice(0)) repo.cleanup();
});

function checkout(files: Record<string, string>): TestRepo {
  const repo = makeRepo(files);
  repos.push(repo);
  // Both checkouts are acme/app: the name comes from the config file (there is no git remote here).
  return repo;
}

function configure(env: NodeJS.ProcessEnv, root: string): void {
  writeAgentConfig(env, [{ path: root, owner: 'acme', name: 'app' }]);
}

describe('two developers on one service', () => {
  it('a conflict is listed, exits 4, and is settled through the running agent; held deletions wait for --yes', async () => {
    const files: Record<string, string> = { 'flows/ci/build.yml': 'build: 1\n' };
    for (let i = 0; i < 150; i++) files[`flows/gen/step-${i}.yml`] = `step: ${i}\n`;
    const a = checkout(files);
    const b = checkout(files);
    const dir = a.dir;
    serve = await startServeProcess(join(dir, 'service.db'), join(dir, 'service.log'));
    const stored = () => serviceTree(readDatabase(join(dir, 'service.db')), 'acme', 'app');
    const aliceEnv = { ...userEnv(join(dir, 'alice'), serve), ...NO_KEYCHAIN };
    const bobEnv = { ...userEnv(join(b.dir, 'bob'), serve), ...NO_KEYCHAIN };
    configure(aliceEnv, a.root);
    configure(bobEnv, b.root);

    alice = startAgentProcess(['start', a.root], aliceEnv);
    await alice.waitFor(/Watching 1 repository/, 60_000);
    expect((await runFlowsync(['sync', b.root], { env: bobEnv })).code).toBe(0);

    // Bob changes build.yml; Alice, who has not seen it, changes it too.
    b.write('flows/ci/build.yml', 'build: bob\n');
    expect((await runFlowsync(['sync', b.root], { env: bobEnv })).code).toBe(0);
    a.write('flows/ci/build.yml', 'build: alice\n');
    // Said as a conflict at once when the live feed told Bob's edit first (issue 47), else when her send is refused.
    await alice.waitFor(
      /flows\/ci\/build\.yml: changed here and on the service: a conflict|conflict flows\/ci\/build\.yml: changed on the service by /,
    );
    expect(stored()['flows/ci/build.yml']).toBe('build: bob\n');

    // Alice's `flowsync conflicts` asks her running agent: who changed it, and what to do; exit 4.
    const listed = await runFlowsync(['conflicts', a.root], { env: aliceEnv });
    expect(listed.code).toBe(4);
    expect(listed.stdout).toContain('1 file in conflict');
    expect(listed.stdout).toMatch(
      /flows\/ci\/build\.yml: changed on the service by \S+@\S+:\S+ \(checkout [0-9a-f]{12}\) at .* UTC; you changed it/,
    );
    const status = await runFlowsync(['status'], { env: aliceEnv });
    expect(status.stdout).not.toMatch(/in sync/);
    // `status` exits 4 as `conflicts` does while something waits (it exited 0: issue 42), and says what.
    expect(status.code, status.stderr).toBe(4);
    expect(status.stdout).toContain('  waiting for you: 1 in conflict\n');

    // Taking the service's version puts Bob's content on her disk; nothing is sent back.
    const taken = await runFlowsync(['resolve', join(a.root, 'flows/ci/build.yml'), '--theirs'], {
      env: aliceEnv,
    });
    expect(taken.code, taken.stderr).toBe(0);
    expect(taken.stdout).toContain("flows/ci/build.yml: the service's version is on disk");
    expect(readFileSync(join(a.root, 'flows/ci/build.yml'), 'utf8')).toBe('build: bob\n');
    expect((await runFlowsync(['conflicts', a.root], { env: aliceEnv })).code).toBe(0);
    expect((await runFlowsync(['status'], { env: aliceEnv })).code).toBe(0);

    // Bob removes a generated folder of 150 files (more than 100 at once): held, nothing deleted, exit 4.
    b.remove('flows/gen');
    const held = await runFlowsync(['sync', b.root], { env: bobEnv });
    expect(held.code).toBe(4);
    expect(held.stderr).toContain('150 deletions held');
    expect(Object.keys(stored())).toHaveLength(151);
    // Putting them back from the service's copy…
    const back = await runFlowsync(['resolve', '--held', '--theirs', b.root], { env: bobEnv });
    expect(back.code, back.stderr).toBe(0);
    expect(back.stdout).toContain('150 files put back on disk');
    expect(readFileSync(join(b.root, 'flows/gen/step-7.yml'), 'utf8')).toBe('step: 7\n');
    expect((await runFlowsync(['sync', b.root], { env: bobEnv })).code).toBe(0);
    // …or, removed again, deleting them with --yes.
    b.remove('flows/gen');
    const yes = await runFlowsync(['sync', '--yes', b.root], { env: bobEnv });
    expect(yes.code, yes.stderr).toBe(0);
    expect(Object.keys(stored())).toEqual(['flows/ci/build.yml']);
    // Alice's agent follows nothing from the service (it sends, it does not fetch): her files stay on her disk.
    expect(existsSync(join(a.root, 'flows/gen/step-7.yml'))).toBe(true);
    await eventually(async () => {
      const again = await runFlowsync(['conflicts', a.root], { env: aliceEnv });
      expect(again.code).toBe(0);
    });
  }, 180_000);
});

describe('held deletions confirmed while a file of their flow is in conflict (issue 45)', () => {
  it('sync --yes sends the flow without the conflict, says what the service took, and nothing is held again', async () => {
    const files: Record<string, string> = { 'flows/ci/build.yml': 'build: 1\n' };
    for (let i = 0; i < 150; i++) files[`flows/gen/step-${i}.yml`] = `step: ${i}\n`;
    const a = checkout(files);
    const b = checkout(files);
    const dir = a.dir;
    serve = await startServeProcess(join(dir, 'service.db'), join(dir, 'service.log'));
    const stored = () => serviceTree(readDatabase(join(dir, 'service.db')), 'acme', 'app');
    // Alice's check of the service waits longer than the test: she learns of Bob's edit from the refusal.
    const aliceEnv = {
      ...userEnv(join(dir, 'alice'), serve),
      ...NO_KEYCHAIN,
      FLOWSYNC_SERVICE_CHECK_MS: '3600000',
    };
    const bobEnv = { ...userEnv(join(b.dir, 'bob'), serve), ...NO_KEYCHAIN };
    configure(aliceEnv, a.root);
    configure(bobEnv, b.root);
    alice = startAgentProcess(['start', a.root], aliceEnv);
    await alice.waitFor(/Watching 1 repository/, 60_000);
    expect((await runFlowsync(['sync', b.root], { env: bobEnv })).code).toBe(0);

    // Bob changes step-0.yml; Alice, who has not seen it, removes the whole generated folder: held.
    b.write('flows/gen/step-0.yml', 'step: bob\n');
    expect((await runFlowsync(['sync', b.root], { env: bobEnv })).code).toBe(0);
    a.remove('flows/gen');
    // 150 held; or, when the live feed told Bob's edit first, step-0.yml a conflict at once and the other 149 held.
    await alice.waitFor(/acme\/app: 1(49|50) deletions held/, 30_000);

    // Her word: the service refuses the flow for step-0.yml (a conflict), and the other 149 still go.
    const yes = await runFlowsync(['sync', '--yes', a.root], { env: aliceEnv });
    expect(yes.code, yes.stderr).toBe(0);
    expect(yes.stdout).toContain(`${a.root}: 149 held deletions sent to the service`);
    expect(stored()).toEqual({ 'flows/ci/build.yml': 'build: 1\n', 'flows/gen/step-0.yml': 'step: bob\n' });
    const left = await runFlowsync(['conflicts', a.root], { env: aliceEnv });
    expect(left.code).toBe(4);
    expect(left.stdout).toContain('1 file in conflict');
    expect(left.stdout).not.toMatch(/deletions? held/);

    // Bob pulls the deletion (his disk loses the 149 files the service no longer has): nothing is held for him.
    for (let i = 1; i < 150; i++) b.remove(`flows/gen/step-${i}.yml`);
    const pulled = await runFlowsync(['sync', b.root], { env: bobEnv });
    expect(pulled.code, pulled.stdout + pulled.stderr).toBe(0);
    expect(pulled.stderr).not.toMatch(/deletions? held/);
    expect(stored()).toEqual({ 'flows/ci/build.yml': 'build: 1\n', 'flows/gen/step-0.yml': 'step: bob\n' });
  }, 180_000);
});
