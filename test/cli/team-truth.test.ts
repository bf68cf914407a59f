import { execFileSync } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
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
import { agentStatusSchema, connectToBridge, trayLine } from '../../src/window/index.ts';

/**
 * Issue 41, the truth of the status, as two developers live it: Alice and Bob, each with a HOME of their own and a
 * clone of one git repository, on one `flowsync serve`. The service's rows are the ground truth: "in sync" is never
 * said while Alice's disk and the service differ, a teammate's edit of a file untouched here is "newer on the
 * service" (never a conflict) within the minute, and a conflict is no longer listed once the disk is the service's.
 */
const IDENTITY = {
  GIT_AUTHOR_NAME: 'flowsync test',
  GIT_AUTHOR_EMAIL: 'test@flowsync.invalid',
  GIT_COMMITTER_NAME: 'flowsync test',
  GIT_COMMITTER_EMAIL: 'test@flowsync.invalid',
};

let serve: ServeProcess | null = null;
let alice: AgentProcess | null = null;
let dir: string | null = null;

afterEach(async () => {
  alice?.signal('SIGINT');
  await alice?.exitWithin(10_000);
  alice = null;
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

/** A bare origin with the files committed, and a clone of it per developer (`<dir>/<name>/app`). */
async function team(files: Record<string, string>) {
  dir = mkdtempSync(join(tmpdir(), 'flowsync-team-'));
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
  execFileSync('git', ['clone', '-q', '--bare', seed, join(base, 'origin.git')]);
  serve = await startServeProcess(join(base, 'service.db'), join(base, 'service.log'));
  const person = (name: string) => {
    const root = join(base, name, 'app');
    mkdirSync(join(base, name));
    execFileSync('git', ['clone', '-q', join(base, 'origin.git'), root]);
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
    };
  };
  const stored = () => serviceTree(readDatabase(join(base, 'service.db')), 'acme', 'app');
  return { alice: person('alice'), bob: person('bob'), stored };
}

describe('the truth of the status between two developers', () => {
  it("a teammate's edit of a file untouched here is newer on the service within the minute, never a conflict, and taken in one action", async () => {
    const {
      alice: a,
      bob: b,
      stored,
    } = await team({
      'flows/ci/build.yml': 'build: 1\n',
      'flows/ci/test.yml': 'test: 1\n',
    });
    alice = startAgentProcess(['start', a.root], a.env);
    await alice.waitFor(/Watching 1 repository/, 60_000);
    expect((await b.flowsync('sync', b.root)).code).toBe(0);

    // Bob changes build.yml, commits, pushes, and syncs: the service has his version, Alice's disk does not.
    b.write('flows/ci/build.yml', 'build: bob\n');
    b.git('commit', '-qam', 'bob');
    b.git('push', '-q');
    expect((await b.flowsync('sync', b.root)).code).toBe(0);
    expect(stored()['flows/ci/build.yml']).toBe('build: bob\n');
    expect(a.read('flows/ci/build.yml')).toBe('build: 1\n');

    // Alice's agent says so by itself (no Sync now), in its terminal, naming who: newer, not in conflict.
    await alice.waitFor(
      /1 file newer on the service, by \S*bob\S*( \(checkout [0-9a-f]+\))?: `flowsync resolve --newer` takes them/,
    );
    expect(alice.output()).not.toMatch(/conflict flows\/ci\/build\.yml/);
    const status = await a.flowsync('status');
    expect(status.stdout).toContain('your changes are sent; 1 file newer on the service, by ');
    expect(status.stdout).not.toMatch(/in sync/);
    const conflicts = await a.flowsync('conflicts', a.root);
    expect(conflicts.code, conflicts.stdout).toBe(0);
    expect(conflicts.stdout).toContain('no conflicts');
    expect(conflicts.stdout).toContain('1 file newer on the service, unchanged here (not a conflict)');
    // The window's status (its cards' counts and the tray), through the running agent's bridge: never "in sync".
    const lock = JSON.parse(
      readFileSync(join(dirname(a.root), 'home/.local/share/flowsync/agent.lock'), 'utf8'),
    ) as {
      bridge: string;
    };
    const shown = agentStatusSchema.parse(await connectToBridge(lock.bridge).call('status', {}));
    expect(shown.repositories[0]!.counts.behind).toBe(1);
    expect(trayLine(shown)).toBe('flowsync: your changes are sent; 1 file newer on the service');

    // "Take them": Bob's version on Alice's disk; nothing sent, nothing else touched.
    const taken = await a.flowsync('resolve', '--newer', a.root);
    expect(taken.code, taken.stderr).toBe(0);
    expect(taken.stdout).toContain("flows/ci/build.yml: the service's newer version is on disk");
    expect(a.read('flows/ci/build.yml')).toBe('build: bob\n');
    expect(a.read('flows/ci/test.yml')).toBe('test: 1\n');
    expect(stored()).toEqual({ 'flows/ci/build.yml': 'build: bob\n', 'flows/ci/test.yml': 'test: 1\n' });
    const after = await a.flowsync('status');
    expect(after.stdout).not.toContain('newer on the service');
    // The disk is the service's now: the agent's stop line may say so.
    alice.signal('SIGINT');
    await alice.exitWithin(10_000);
    expect(alice.output()).toContain('Stopped; everything was in sync.');
    alice = null;
  }, 180_000);

  it('a conflict is no longer listed once a pull made the disk what the service has', async () => {
    const { alice: a, bob: b, stored } = await team({ 'flows/ci/build.yml': 'build: 1\n' });
    alice = startAgentProcess(['start', a.root], a.env);
    await alice.waitFor(/Watching 1 repository/, 60_000);
    expect((await b.flowsync('sync', b.root)).code).toBe(0);
    // Both change build.yml; Bob's goes first, Alice's is a conflict.
    b.write('flows/ci/build.yml', 'build: bob\n');
    b.git('commit', '-qam', 'bob');
    b.git('push', '-q');
    expect((await b.flowsync('sync', b.root)).code).toBe(0);
    a.write('flows/ci/build.yml', 'build: alice\n');
    await eventually(async () => expect((await a.flowsync('conflicts', a.root)).code).toBe(4));
    // Bob changes it again; Alice drops her edit and pulls: her disk is the service's.
    b.write('flows/ci/build.yml', 'build: bob 2\n');
    b.git('commit', '-qam', 'bob 2');
    b.git('push', '-q');
    expect((await b.flowsync('sync', b.root)).code).toBe(0);
    a.git('checkout', '--', 'flows/ci/build.yml');
    a.git('pull', '-q');
    expect(a.read('flows/ci/build.yml')).toBe(stored()['flows/ci/build.yml']);
    // Her running agent stops listing it by itself: no conflict, nothing newer, nothing sent.
    await eventually(async () => {
      const listed = await a.flowsync('conflicts', a.root);
      expect(listed.stdout).not.toContain('in conflict');
      expect(listed.code, listed.stdout).toBe(0);
    }, 20_000);
    const status = await a.flowsync('status');
    expect(status.stdout).not.toContain('newer on the service');
    expect(status.stdout).toContain('0 pending');
    expect(stored()).toEqual({ 'flows/ci/build.yml': 'build: bob 2\n' });
  }, 180_000);

  it('a service restored from an older backup is said in one line, and no hint deletes or ages the only copy', async () => {
    const { alice: a, stored } = await team({ 'flows/ci/build.yml': 'build: 1\n' });
    const dbPath = join(dir!, 'service.db');
    expect((await a.flowsync('sync', a.root)).code).toBe(0);
    // The operator's nightly copy of the database, then a day of work: a new file, an edit.
    const port = serve!.port;
    await serve!.stop();
    copyFileSync(dbPath, `${dbPath}.backup`);
    serve = await startServeProcess(dbPath, join(dir!, 'service.log'), ['--port', String(port)]);
    a.write('flows/ci/deploy.yml', 'deploy: 1\n');
    a.write('flows/ci/build.yml', 'build: 2\n');
    expect((await a.flowsync('sync', a.root)).code).toBe(0);
    expect(stored()).toEqual({ 'flows/ci/build.yml': 'build: 2\n', 'flows/ci/deploy.yml': 'deploy: 1\n' });

    // The service is restored from last night's copy: it never had deploy.yml, and has build.yml's older version.
    await serve!.stop();
    for (const suffix of ['-wal', '-shm']) rmSync(`${dbPath}${suffix}`, { force: true });
    copyFileSync(`${dbPath}.backup`, dbPath);
    serve = await startServeProcess(dbPath, join(dir!, 'service.log'), ['--port', String(port)]);
    expect(stored()).toEqual({ 'flows/ci/build.yml': 'build: 1\n' });

    const synced = await a.flowsync('sync', a.root);
    const listed = await a.flowsync('conflicts', a.root);
    const status = await a.flowsync('status');
    const said = [synced.stdout, synced.stderr, listed.stdout, status.stdout].join('\n');
    // Said: the service went back in time. Never: that the file was deleted there, or that --theirs takes it.
    expect(said).not.toMatch(/deleted on the service/);
    expect(said).not.toMatch(/--theirs/);
    expect(said).not.toMatch(/in sync/);
    expect(listed.stdout).toContain('deploy.yml: the service no longer has the version this checkout synced');
    const wentBack = status.stdout.match(/the service went back in time[^\n]*/g) ?? [];
    expect(wentBack).toHaveLength(1);
    // Its one action sends this checkout's copies again: the service has them back, the disk is untouched.
    const mine = await a.flowsync('resolve', a.root, '--mine');
    expect(mine.code, mine.stderr).toBe(0);
    expect((await a.flowsync('sync', a.root)).code).toBe(0);
    expect(stored()).toEqual({ 'flows/ci/build.yml': 'build: 2\n', 'flows/ci/deploy.yml': 'deploy: 1\n' });
    expect(a.read('flows/ci/deploy.yml')).toBe('deploy: 1\n');
  }, 180_000);

  it('sync --dry-run says what the run then does, flow by flow, with what a conflict holds back', async () => {
    const {
      alice: a,
      bob: b,
      stored,
    } = await team({
      'flows/ci/build.yml': 'build: 1\n',
      'flows/ci/test.yml': 'test: 1\n',
      'flows/deploy/main.yml': 'deploy: 1\n',
    });
    expect((await a.flowsync('sync', a.root)).code).toBe(0);
    expect((await b.flowsync('sync', b.root)).code).toBe(0);
    b.write('flows/ci/build.yml', 'build: bob\n');
    expect((await b.flowsync('sync', b.root)).code).toBe(0);
    // Alice changes the file Bob changed, and two others of its flow, and one of another flow.
    a.write('flows/ci/build.yml', 'build: alice\n');
    a.write('flows/ci/test.yml', 'test: alice\n');
    a.write('flows/ci/new.yml', 'new: alice\n');
    a.write('flows/deploy/main.yml', 'deploy: alice\n');
    const before = stored();

    const dry = await a.flowsync('sync', '--dry-run', a.root);
    expect(dry.code, dry.stderr).toBe(0);
    expect(dry.stdout).toContain('  flows/ci: 1 new, 1 changed, 0 deleted\n    + new.yml\n    ~ test.yml\n');
    expect(dry.stdout).toMatch(
      / {2}flows\/ci\/build\.yml: conflict: changed on the service by \S*bob\S*.*; not sent\n/,
    );
    expect(dry.stdout).toContain('  flows/deploy: 0 new, 1 changed, 0 deleted\n    ~ main.yml\n');
    expect(dry.stdout).toContain('would send 3 files; 1 not sent');
    expect(stored()).toEqual(before);

    // The run does that: the three files, and not the one in conflict, whose service version (Bob's) stays.
    const run = await a.flowsync('sync', a.root);
    expect(run.code).toBe(4);
    expect(stored()).toEqual({
      'flows/ci/build.yml': 'build: bob\n',
      'flows/ci/new.yml': 'new: alice\n',
      'flows/ci/test.yml': 'test: alice\n',
      'flows/deploy/main.yml': 'deploy: alice\n',
    });
  }, 180_000);
});
