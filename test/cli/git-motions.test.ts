import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import {
  NO_KEYCHAIN,
  startAgentProcess,
  userEnv,
  writeAgentConfig,
  type AgentProcess,
} from '../support/agent-process.ts';
import { runFlowsync } from '../support/cli.ts';
import { eventually, serviceTree } from '../support/repo.ts';
import { startServeProcess, type ServeProcess } from '../support/serve-process.ts';
import { readDatabase } from '../support/service.ts';

/**
 * Issue 46, git's motions are held, not sent: Ada and Bob, each with a HOME of their own, a clone of one git
 * repository and a running agent, on one `flowsync serve`. What git does to Bob's checkout (`checkout -- .`, a
 * branch switch) is one change set that waits for Bob: the service keeps what the team wrote until he sends it. A
 * person alone on a service (nobody else writes to the repository) has a branch switch sent as before.
 */
const IDENTITY = {
  GIT_AUTHOR_NAME: 'flowsync test',
  GIT_AUTHOR_EMAIL: 'test@flowsync.invalid',
  GIT_COMMITTER_NAME: 'flowsync test',
  GIT_COMMITTER_EMAIL: 'test@flowsync.invalid',
};

let serve: ServeProcess | null = null;
const agents: AgentProcess[] = [];
let dir: string | null = null;

afterEach(async () => {
  for (const agent of agents.splice(0)) {
    agent.signal('SIGINT');
    await agent.exitWithin(10_000);
  }
  await serve?.stop();
  serve = null;
  if (dir) rmSync(dir, { recursive: true, force: true });
  dir = null;
});

function git(cwd: string, ...args: string[]): string {
  return execFileSync('git', ['-C', cwd, ...args], {
    env: { ...process.env, ...IDENTITY },
    encoding: 'utf8',
  });
}

/** A bare origin with the files committed (and `branches`, each a change of main), a clone per person. */
async function team(files: Record<string, string>, branches: Record<string, (seed: string) => void> = {}) {
  dir = mkdtempSync(join(tmpdir(), 'flowsync-git-motions-'));
  const base = dir;
  const seed = join(base, 'seed');
  mkdirSync(seed);
  for (const [path, content] of Object.entries(files)) {
    mkdirSync(dirname(join(seed, path)), { recursive: true });
    writeFileSync(join(seed, path), content);
  }
  git(seed, 'init', '-q', '-b', 'main');
  git(seed, 'add', '-A');
  git(seed, 'commit', '-q', '-m', 'seed');
  for (const [branch, change] of Object.entries(branches)) {
    git(seed, 'checkout', '-q', '-b', branch);
    change(seed);
    git(seed, 'add', '-A');
    git(seed, 'commit', '-q', '-m', branch);
    git(seed, 'checkout', '-q', 'main');
  }
  execFileSync('git', ['clone', '-q', '--bare', seed, join(base, 'origin.git')]);
  serve = await startServeProcess(join(base, 'service.db'), join(base, 'service.log'));
  const person = (name: string) => {
    const root = join(base, name, 'app');
    mkdirSync(join(base, name));
    execFileSync('git', ['clone', '-q', join(base, 'origin.git'), root]);
    for (const branch of Object.keys(branches)) git(root, 'branch', '-q', branch, `origin/${branch}`);
    const env = {
      ...userEnv(join(base, name, 'home'), serve!),
      ...NO_KEYCHAIN,
      // The check of the service every minute, shrunk to a second so that the test need not wait for it.
      FLOWSYNC_SERVICE_CHECK_MS: '1000',
    };
    writeAgentConfig(env, [{ path: root, owner: 'acme', name: 'app' }]);
    return {
      root,
      env,
      write: (path: string, content: string) => writeFileSync(join(root, path), content),
      read: (path: string) => readFileSync(join(root, path), 'utf8'),
      git: (...args: string[]) => git(root, ...args),
      flowsync: (...args: string[]) => runFlowsync(args, { env }),
      start: async () => {
        const agent = startAgentProcess(['start', root], env);
        agents.push(agent);
        await agent.waitFor(/Watching 1 repository/, 60_000);
        return agent;
      },
    };
  };
  const stored = () => serviceTree(readDatabase(join(base, 'service.db')), 'acme', 'app');
  return { ada: person('ada'), bob: person('bob'), stored };
}

describe("git's motions on a service shared with a teammate", () => {
  it("`git checkout -- .` after taking a teammate's version leaves the service as the teammate wrote it, and lists the revert as waiting until sent", async () => {
    const { ada, bob, stored } = await team({
      'flows/ci/build.yml': 'build: 1\n',
      'flows/ci/test.yml': 'test: 1\n',
    });
    await ada.start();
    const bobs = await bob.start();

    // Ada's edit reaches the service; Bob's agent lists it as newer; he takes it.
    ada.write('flows/ci/build.yml', 'build: ada\n');
    await eventually(() => expect(stored()['flows/ci/build.yml']).toBe('build: ada\n'));
    await bobs.waitFor(/1 file newer on the service/, 30_000);
    expect((await bob.flowsync('resolve', '--newer', bob.root)).code).toBe(0);
    expect(bob.read('flows/ci/build.yml')).toBe('build: ada\n');

    // git status shows it modified; Bob cleans his tree. That is git's change, not Bob's edit: it waits.
    bob.git('checkout', '--', '.');
    expect(bob.read('flows/ci/build.yml')).toBe('build: 1\n');
    await bobs.waitFor(/git checkout -- on main: 1 changed, waiting for you/, 30_000);
    const status = await bob.flowsync('status');
    expect(status.stdout).toContain('git checkout -- on main: 1 changed');
    expect(status.stdout).not.toMatch(/in sync/);
    expect(status.code).toBe(4);
    // A later look at the service, and a round, change nothing: Ada's version stays.
    await bobs.waitFor(/git checkout -- on main/);
    await new Promise((resolve) => setTimeout(resolve, 2500));
    expect(stored()['flows/ci/build.yml']).toBe('build: ada\n');

    // Bob says send: it goes, naming what it sent.
    const sent = await bob.flowsync('sync', '--yes', bob.root);
    expect(sent.code, sent.stderr).toBe(0);
    expect(sent.stdout).toMatch(/git checkout -- on main: 1 changed sent to the team/);
    await eventually(() => expect(stored()['flows/ci/build.yml']).toBe('build: 1\n'));
    expect((await bob.flowsync('status')).stdout).not.toContain('git checkout -- on main');
  }, 240_000);

  it("a branch switch's edits and deletions are one change set naming the branch, held until sent", async () => {
    const old: Record<string, string> = {};
    for (let n = 0; n < 6; n++) old[`flows/old/step-${n}.yml`] = `step: ${n}\n`;
    const { ada, bob, stored } = await team(
      { 'flows/ci/build.yml': 'build: 1\n', 'flows/ci/test.yml': 'test: 1\n', ...old },
      {
        cleanup: (seed) => {
          writeFileSync(join(seed, 'flows/ci/build.yml'), 'build: cleanup\n');
          rmSync(join(seed, 'flows/old'), { recursive: true });
        },
      },
    );
    await ada.start();
    await eventually(() => expect(Object.keys(stored())).toHaveLength(8));
    const bobs = await bob.start();
    const before = stored();

    bob.git('checkout', '-q', 'cleanup');
    await bobs.waitFor(/branch cleanup: 1 changed, 6 deleted, waiting for you/, 30_000);
    const status = await bob.flowsync('status');
    expect(status.stdout).toContain('branch cleanup: 1 changed, 6 deleted');
    expect(status.code).toBe(4);
    await new Promise((resolve) => setTimeout(resolve, 2500));
    expect(stored()).toEqual(before);

    // An edit Bob makes on the branch is his, and goes as today; the branch's changes still wait.
    bob.write('flows/ci/test.yml', 'test: bob\n');
    await eventually(() => expect(stored()['flows/ci/test.yml']).toBe('test: bob\n'));
    expect(stored()['flows/ci/build.yml']).toBe('build: 1\n');

    const sent = await bob.flowsync('sync', '--yes', bob.root);
    expect(sent.code, sent.stderr).toBe(0);
    expect(sent.stdout).toMatch(/branch cleanup: 1 changed, 6 deleted sent to the team/);
    await eventually(() =>
      expect(stored()).toEqual({
        'flows/ci/build.yml': 'build: cleanup\n',
        'flows/ci/test.yml': 'test: bob\n',
      }),
    );
  }, 240_000);

  it('alone on the service (nobody else writes to the repository), a branch switch is sent as today', async () => {
    const { ada, stored } = await team(
      { 'flows/ci/build.yml': 'build: 1\n', 'flows/ci/old.yml': 'old: 1\n' },
      {
        cleanup: (seed) => {
          writeFileSync(join(seed, 'flows/ci/build.yml'), 'build: cleanup\n');
          rmSync(join(seed, 'flows/ci/old.yml'));
        },
      },
    );
    const adas = await ada.start();
    ada.git('checkout', '-q', 'cleanup');
    await eventually(() => expect(stored()).toEqual({ 'flows/ci/build.yml': 'build: cleanup\n' }));
    await adas.waitFor(/branch main → cleanup/);
    expect(adas.output()).not.toContain('waiting for you');
  }, 240_000);
});
