import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { agentOnService, type AgentOnService } from '../support/agent-process.ts';
import { runFlowsync } from '../support/cli.ts';
import { eventually, serviceTree } from '../support/repo.ts';

/**
 * Issue 25, paused everywhere: a pause showed only in the window; `status` (text and JSON) said "0 pending" for a
 * paused repository and did not count edits made while paused, the terminal said nothing, and the pause survived
 * restarts silently. Now a paused repository keeps watching and counting, sends nothing, and says so everywhere.
 */
let user: AgentOnService | null = null;

afterEach(async () => {
  await user?.close();
  user = null;
});

interface JsonStatus {
  root: string;
  paused: boolean;
  pausedSince: string | null;
  counts: { pending: number };
}

describe('a paused repository', () => {
  it('counts edits made while paused, says so in status, the terminal and across a restart, and sends them on resume', async () => {
    user = await agentOnService({ 'flows/ci/build.yml': 'build: 1\n', 'flows/ci/lint.yml': 'lint: 1\n' });
    const { repo, svc, env } = user;
    const stored = () => serviceTree(svc.read, 'local', 'repo');
    const run = (...args: string[]) => runFlowsync(args, { env, cwd: repo.root });
    const status = async (): Promise<JsonStatus> => {
      const result = await run('status', '--json');
      expect(result.code, result.stderr).toBe(0);
      return (JSON.parse(result.stdout) as JsonStatus[])[0]!;
    };

    let agent = user.start(repo.root);
    await agent.waitFor(/Watching 1 repository/, 60_000);
    expect(await status()).toMatchObject({ paused: false, pausedSince: null, counts: { pending: 0 } });

    const paused = await run('pause');
    expect(paused.code, paused.stderr).toBe(0);
    expect(paused.stdout).toContain(
      `local/repo: paused; changes are counted and sent when resumed (flowsync resume ${repo.root})`,
    );
    await agent.waitFor(/\d\d:\d\d:\d\d local\/repo: paused; changes are counted/);
    const config = JSON.parse(readFileSync(join(user.configDir, 'config.json'), 'utf8')) as {
      repositories: { enabled: boolean; pausedAt?: string }[];
    };
    expect(config.repositories[0]).toMatchObject({ enabled: false, pausedAt: expect.any(String) });

    // An edit while paused: counted as pending (it used to be "0 pending"), not sent.
    repo.write('flows/ci/build.yml', 'build: 2\n');
    await eventually(async () => expect((await status()).counts.pending).toBe(1));
    const json = await status();
    expect(json.paused).toBe(true);
    expect(json.pausedSince).toBe(config.repositories[0]!.pausedAt);
    const text = await run('status');
    expect(text.stdout).toMatch(
      /\n {2}paused since \d{4}-\d\d-\d\d \d\d:\d\d:\d\d: nothing is sent until `flowsync resume .*repo` \(1 change waiting\)/,
    );
    expect(stored()['flows/ci/build.yml']).toBe('build: 1\n');

    // Stopped, an edit made meanwhile, started again: still paused, both counted, nothing sent.
    agent.signal('SIGINT');
    expect(await agent.exitWithin()).toBe(0);
    expect(agent.output()).toContain('Stopped; local/repo paused, 1 file pending, sent when resumed.');
    repo.write('flows/ci/new.yml', 'new: 1\n');
    const sync = await run('sync', '.');
    expect(sync.code).toBe(4);
    expect(sync.stdout).toMatch(/repo: paused since .*, nothing sent: `flowsync resume .*repo` resumes it/);
    agent = user.start(repo.root);
    await agent.waitFor(/Watching 1 repository/, 60_000);
    expect(agent.output()).toMatch(
      /local\/repo \(.*repo\): 1 flow, 3 files, 2 pending, paused since .*, nothing sent until `flowsync resume`/,
    );
    expect(agent.output()).not.toContain('in sync');
    expect(await status()).toMatchObject({ paused: true, counts: { pending: 2 } });
    expect(stored()['flows/ci/new.yml']).toBeUndefined();

    // Resumed: what waited is sent at once, and every place says so.
    const resumed = await run('resume');
    expect(resumed.code, resumed.stderr).toBe(0);
    expect(resumed.stdout).toContain('local/repo: resumed, in sync');
    expect(stored()).toMatchObject({ 'flows/ci/build.yml': 'build: 2\n', 'flows/ci/new.yml': 'new: 1\n' });
    await agent.waitFor(/local\/repo: resumed: sending 2 changes made while paused/);
    expect(await status()).toMatchObject({ paused: false, pausedSince: null, counts: { pending: 0 } });
    expect((await run('status')).stdout).not.toContain('paused');
  }, 240_000);

  it('refuses a folder flowsync does not sync, in one line that says what to do', async () => {
    user = await agentOnService({ 'flows/ci/build.yml': 'build: 1\n' });
    const result = await runFlowsync(['pause', user.repo.root], { env: user.env });
    expect(result.code).toBe(2);
    expect(result.stderr.trim()).toBe(
      `flowsync: ${user.repo.root} is not synced by flowsync: \`flowsync start ${user.repo.root}\` adds it.`,
    );
  });
});
