import { createServer, type AddressInfo } from 'node:net';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { agentOnService, type AgentOnService } from '../support/agent-process.ts';
import { runFlowsync } from '../support/cli.ts';
import { diskTree, eventually, serviceTree, type TestRepo } from '../support/repo.ts';
import { readDatabase, type TestService } from '../support/service.ts';

let user: AgentOnService | null = null;
let svc: TestService;
let repo: TestRepo;
let env: NodeJS.ProcessEnv;
let start: AgentOnService['start'];

afterEach(async () => {
  await user?.close();
  user = null;
});

/** A user with a repository of `files` and the test's service in their environment (`extra` on top). */
async function aUser(files: Record<string, string | Buffer>, extra: NodeJS.ProcessEnv = {}) {
  user = await agentOnService(files, { env: extra });
  ({ svc, repo, env, start } = user);
}

const stored = () => serviceTree(svc.read, 'local', 'repo');

describe('npm start -- <repository>', () => {
  beforeEach(() =>
    aUser({ 'flows/hello/main.yaml': 'hello\n', 'flows/hello/logo.png': Buffer.from([0, 1]) }),
  );

  it('syncs, prints a line per sync while watching, and stops cleanly on Ctrl-C', async () => {
    const agent = start(repo.root);
    await agent.waitFor(/Watching 1 repository/);
    expect(agent.output()).toMatch(/local\/repo \(.*\): 1 flow, 2 files, in sync, 1 not sent/);
    // stdout is a pipe here, not a terminal: the address without a token, and how to open it.
    expect(agent.output()).toMatch(
      /Window: http:\/\/[a-z0-9]+\.localhost:\d+\/ \(`flowsync ui --open` opens it\)\n/,
    );
    expect(agent.output()).not.toContain('token=');
    // A round of at most 3 files names them, from the agent's activity (what the window's Recent activity shows).
    repo.write('flows/hello/main.yaml', 'hello again\n');
    await agent.waitFor(/\d\d:\d\d:\d\d local\/repo: flows\/hello\/main\.yaml updated in \d+ ms\n/);
    repo.write('flows/hello/photo.png', Buffer.from([0x89, 0x50, 0x4e, 0x47, 0, 0xff]));
    await agent.waitFor(
      /\d\d:\d\d:\d\d local\/repo: flows\/hello\/photo\.png not sent: binary \(not UTF-8 text\): add it to \.gitignore\n/,
    );
    // The file that was skipped from the start is in the summary, not announced again.
    expect(agent.output()).not.toContain('logo.png not sent');
    repo.remove('flows/hello/photo.png');
    repo.write('flows/hello/second.yaml', 'second\n');
    await agent.waitFor(/local\/repo: flows\/hello\/second\.yaml created in \d+ ms\n/);
    // More than 3 files in a round: counted (they may come in one round or several; each line is one or the other).
    for (let n = 0; n < 8; n++) repo.write(`flows/many/file-${n}.yaml`, `${n}\n`);
    await eventually(() => expect(stored()).toEqual(diskTree(repo.root, 'flows', (p) => p.endsWith('.png'))));
    agent.signal('SIGINT');
    expect(await agent.exitWithin()).toBe(0);
    // The stop line looks at the service first, for at most 2 s (STOP_LOOK_MS), and says where the agent was: on a
    // loaded machine the look may not answer in time ("in sync as of 14:02; …"), or a rescan the last writes started
    // may still run ("looking at the disk"). Each is as true (each came once in three full runs here); everything
    // was on the service before the Ctrl-C (stored() above).
    expect(agent.output()).toMatch(
      /Stopped; (everything was in sync|in sync as of \d\d:\d\d; the service could not be reached now|looking at the disk)\.\n/,
    );
    const lines = agent.output().split('\n');
    const named = lines.filter((line) => /local\/repo: flows\/many\/file-\d\.yaml created/.test(line));
    const counted = lines.filter((line) => /local\/repo: flows\/many, \+\d+ ~0 -0 files in/.test(line));
    expect(named.length + counted.length).toBeGreaterThan(0);
    for (const line of named) expect(line.split(', ').length).toBeLessThanOrEqual(3);

    const status = await runFlowsync(['status'], { env });
    expect(status.code).toBe(0);
    expect(status.stdout).toMatch(
      /local\/repo {2}.* {2}\(http:\/\/127\.0\.0\.1:\d+, current service\)\n {2}2 flows, 11 files, pending not known, 1 not sent, last sync \d{4}-/,
    );
    expect(status.stdout).toContain('not sent: flows/hello/logo.png: binary');

    // The folder was remembered: a plain `npm start` picks it up again.
    const again = start();
    await again.waitFor(/Watching 1 repository/);
  });

  it('exits 2 with a hint when there is no repository yet', async () => {
    const result = await runFlowsync(['start'], { env });
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('npm start -- ');
    const missing = await runFlowsync(['start', join(repo.dir, 'no-such-folder')], { env });
    expect(missing.code).toBe(2);
    expect(missing.stderr).toMatch(
      /^flowsync: .*no-such-folder does not exist: give the folder of a repository\.\n$/,
    );
  });
});

describe('flowsync sync (one shot)', () => {
  beforeEach(() => aUser({ 'flows/a/x.yaml': 'x\n' }));

  it('exits 0 when everything went through and 3 when the service cannot be reached', async () => {
    const ok = await runFlowsync(['sync', repo.root], { env });
    expect(ok.code, ok.stderr).toBe(0);
    expect(stored()).toEqual({ 'flows/a/x.yaml': 'x\n' });
    repo.write('flows/a/y.yaml', 'y\n');
    const down = await runFlowsync(['sync', repo.root, '--url', 'http://127.0.0.1:9'], {
      env: { ...env, FLOWSYNC_TOKEN: 'fsu_whatever' },
    });
    expect(down.code).toBe(3);
    expect(down.stderr).toContain('Cannot reach the service at http://127.0.0.1:9');
  });
});

describe('the agent killed with SIGKILL in the middle of a large initial sync', () => {
  it('restarted, sends exactly what is missing and converges', async () => {
    const files: Record<string, string> = {};
    for (let f = 0; f < 600; f++) {
      for (let i = 0; i < 10; i++) files[`flows/f${f}/s${i}.yaml`] = `${f}/${i} `.repeat(400);
    }
    await aUser(files);
    const first = start(repo.root);
    let atKill = 0;
    await eventually(
      () => {
        atKill = svc.read<{ n: number }>('SELECT count(*) AS n FROM flow_files')[0]!.n;
        expect(atKill).toBeGreaterThan(0);
      },
      60_000,
      2,
    );
    first.signal('SIGKILL');
    await first.exited;
    expect(atKill).toBeLessThan(6000);

    const second = start(repo.root);
    await second.waitFor(/Watching 1 repository/, 60_000);
    await eventually(() => expect(stored()).toEqual(diskTree(repo.root)), 30_000);
    expect(second.output()).toMatch(/600 flows, 6,000 files, in sync/);
  }, 120_000);
});

describe('with no service configured: the embedded service', () => {
  it('runs the service inside the agent, keeps its tokens in the keychain, and reuses them on the next start', async () => {
    await aUser(
      { 'flows/hello/main.yaml': 'embedded\n' },
      { FLOWSYNC_URL: '', FLOWSYNC_TOKEN: '', FLOWSYNC_EMBEDDED_PORT: String(await freePort()) },
    );
    const first = start(repo.root);
    await first.waitFor(/Watching 1 repository/);
    expect(first.output()).toMatch(/syncing with http:\/\/127\.0\.0\.1:\d+ \(the embedded service\)/);
    expect(first.output()).toMatch(/tokens are in the OS keychain/);
    expect(first.output()).not.toMatch(/fs[ua]_/);
    first.signal('SIGINT');
    expect(await first.exitWithin()).toBe(0);

    const dbPath = join(repo.dir, 'home/.local/share/flowsync/service.db');
    expect(readDatabase(dbPath)('SELECT content FROM flow_files')).toEqual([{ content: 'embedded\n' }]);

    const second = start();
    await second.waitFor(/Watching 1 repository/);
    expect(second.output()).not.toMatch(/tokens are/);
    expect(second.output()).toMatch(/1 flow, 1 file, in sync/);
    second.signal('SIGINT');
    expect(await second.exitWithin()).toBe(0);
  });
});

/** The exit code after a signal; a process that does not end fails the test with its output, not a time-out. */
async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((ready) => server.listen(0, '127.0.0.1', ready));
  const { port } = server.address() as AddressInfo;
  await new Promise((done) => server.close(done));
  return port;
}
