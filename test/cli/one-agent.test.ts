import { existsSync, mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { agentOnService, type AgentOnService, type AgentProcess } from '../support/agent-process.ts';
import { runFlowsync } from '../support/cli.ts';
import { diskTree, eventually, serviceTree, type TestRepo } from '../support/repo.ts';
import type { TestService } from '../support/service.ts';

let user: AgentOnService;
let svc: TestService;
let repo: TestRepo;
/** A second repository (local/second) beside the first (local/repo). */
let second: string;
let env: NodeJS.ProcessEnv;
let lockPath: string;
let start: AgentOnService['start'];

beforeEach(async () => {
  user = await agentOnService({ 'flows/a/x.yaml': 'x\n', 'flows/b/y.yaml': 'y\n' });
  ({ svc, repo, env, start } = user);
  second = join(repo.dir, 'second');
  for (const [path, content] of Object.entries({ 'flows/c/z.yaml': 'z\n', 'flows/d/w.yaml': 'w\n' })) {
    mkdirSync(join(second, path, '..'), { recursive: true });
    writeFileSync(join(second, path), content);
  }
  lockPath = join(user.dataDir, 'agent.lock');
});
afterEach(() => user.close());

/** Whether the process has ended, without waiting for it. */
async function hasExited(agent: AgentProcess): Promise<boolean> {
  const pending = Symbol('pending');
  // A resolved promise wins a race only once it is looked at: give `exited` the same number of turns.
  return (
    (await Promise.race([agent.exited, new Promise((resolve) => setImmediate(resolve, pending))])) !== pending
  );
}

/** The window's address as an agent whose stdout is not a terminal prints it: without a token. */
const windowOf = (agent: AgentProcess) =>
  /Window: (\S+) \(`flowsync ui --open` opens it\)/.exec(agent.output())?.[1];

describe('one agent per machine user', () => {
  it('of two starts at once, one runs the agent and the other hands it its folder and exits 0', async () => {
    const [a, b] = [start(repo.root), start(second)];
    await Promise.race([a.exited, b.exited]);
    const [running, handed] = (await hasExited(a)) ? [b, a] : [a, b];
    expect(await handed.exited, handed.output()).toBe(0);
    expect(await hasExited(running)).toBe(false);
    await running.waitFor(/Watching/);
    const address = windowOf(running)!;
    expect(handed.output()).toMatch(/an agent is already running \(pid \d+\); handing it /);
    expect(handed.output()).toContain(`Window: ${address} (\`flowsync ui --open\` opens it)\n`);
    expect(handed.output()).not.toMatch(/Watching/);

    // Both folders are synced by the one agent, which keeps watching the one handed to it.
    expect(serviceTree(svc.read, 'local', 'repo')).toEqual(diskTree(repo.root));
    expect(serviceTree(svc.read, 'local', 'second')).toEqual(diskTree(second));
    const handedRoot = running === a ? second : repo.root;
    mkdirSync(join(handedRoot, 'flows/e'));
    writeFileSync(join(handedRoot, 'flows/e/new.yaml'), 'new\n');
    await eventually(() => {
      expect(serviceTree(svc.read, 'local', 'repo')).toEqual(diskTree(repo.root));
      expect(serviceTree(svc.read, 'local', 'second')).toEqual(diskTree(second));
    });

    const status = await runFlowsync(['status'], { env });
    expect(status.code, status.stderr).toBe(0);
    expect(status.stdout).toContain(`Agent: running (pid ${running.pid}, since `);
    expect(status.stdout).toContain(`window ${address} (\`flowsync ui --open\` opens it)\n`);
    expect(status.stdout).toMatch(/local\/repo .*\n.*local\/second /s);

    // `flowsync ui` is an agent too: it shows the running one's window instead of starting another.
    const ui = await runFlowsync(['ui'], { env });
    expect(ui.code, ui.stderr).toBe(0);
    expect(ui.stdout).toContain(`Window: ${address} (\`flowsync ui --open\` opens it)\n`);
    // A one-shot sync beside it would send everything twice from one state: refused in one line.
    const sync = await runFlowsync(['sync', repo.root], { env });
    expect(sync.code).toBe(2);
    expect(sync.stderr).toMatch(/^flowsync: An agent is already running \(pid \d+\)[^\n]*\n$/);

    // The lock holds the agent token (what `flowsync ui --open` asks a launch address with): only its owner may read it.
    expect(readFileSync(lockPath, 'utf8')).toMatch(
      /"bridge":"http:\/\/[a-z0-9]+\.localhost:\d+\/#token=[\w-]+"/,
    );
    expect(readFileSync(lockPath, 'utf8')).toContain(address);
    expect(statSync(lockPath).mode & 0o777).toBe(0o600);
    // The commands above reached the agent through its socket in the data folder, which only the user can open.
    const socket = join(lockPath, '..', 'agent.sock');
    expect(JSON.parse(readFileSync(lockPath, 'utf8')).socket).toBe(socket);
    expect(statSync(socket).isSocket()).toBe(true);
    expect(statSync(socket).mode & 0o777).toBe(0o600);
    expect(statSync(join(lockPath, '..')).mode & 0o777).toBe(0o700);
    running.signal('SIGTERM');
    expect(await running.exitWithin()).toBe(0);
    expect(existsSync(lockPath)).toBe(false);
    expect(existsSync(socket)).toBe(false);
    expect((await runFlowsync(['status'], { env })).stdout).toContain('Agent: not running');
  }, 60_000);

  it('after kill -9 the next start takes over the stale lock', async () => {
    const first = start(repo.root);
    await first.waitFor(/Watching 1 repository/);
    first.signal('SIGKILL');
    await first.exited;
    expect(existsSync(lockPath)).toBe(true);
    expect((await runFlowsync(['status'], { env })).stdout).toContain('Agent: not running');

    writeFileSync(join(repo.root, 'flows/a/later.yaml'), 'later\n');
    const next = start(second);
    await next.waitFor(/Watching 2 repositories/);
    expect(next.output()).not.toMatch(/already running/);
    expect(JSON.parse(readFileSync(lockPath, 'utf8')).pid).toBe(next.pid);
    await eventually(() => {
      expect(serviceTree(svc.read, 'local', 'repo')).toEqual(diskTree(repo.root));
      expect(serviceTree(svc.read, 'local', 'second')).toEqual(diskTree(second));
    });
  }, 60_000);

  it('a lock whose pid now belongs to another process, or that is not a lock at all, is stale', async () => {
    mkdirSync(join(lockPath, '..'), { recursive: true });
    // This test's own process is alive, but it did not start when the lock says: its pid was reused.
    const reused = {
      pid: process.pid,
      command: 'start',
      processStart: '1',
      startedAt: new Date().toISOString(),
      bridge: 'http://127.0.0.1:9/#token=stale',
      nonce: 'stale',
    };
    writeFileSync(lockPath, JSON.stringify(reused));
    const first = start(repo.root);
    await first.waitFor(/Watching 1 repository/);
    expect(first.output()).not.toMatch(/already running/);
    first.signal('SIGINT');
    expect(await first.exitWithin()).toBe(0);

    // Where the OS tells no start time (macOS, Windows), a window that does not answer shows the pid was reused.
    writeFileSync(lockPath, JSON.stringify({ ...reused, processStart: null }));
    const second = start();
    await second.waitFor(/Watching 1 repository/);
    expect(second.output()).not.toMatch(/already running/);
    second.signal('SIGINT');
    expect(await second.exitWithin()).toBe(0);

    writeFileSync(lockPath, '\0\0garbage');
    const next = start();
    await next.waitFor(/Watching 1 repository/);
    expect(JSON.parse(readFileSync(lockPath, 'utf8')).pid).toBe(next.pid);
  }, 60_000);
});
