import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { agentOnService, type AgentOnService } from '../support/agent-process.ts';
import { runFlowsync } from '../support/cli.ts';
import { gitIn } from '../support/git.ts';
import { diskTree, eventually, serviceTree } from '../support/repo.ts';

/**
 * Issue 24, a remote rename is a move the user confirms. Measured before: after `git remote set-url origin
 * …/app2.git` the agent said "in sync" at its next start while acme/app2 on the service was empty (the state's
 * outbox for acme/app was renamed in place, with every file acknowledged).
 */
let user: AgentOnService | null = null;

afterEach(async () => {
  await user?.close();
  user = null;
});

describe('a remote renamed with `git remote set-url`', () => {
  it('is said at start and at a rescan, syncs under the old name until --rename, then re-homes every file', async () => {
    user = await agentOnService(
      { 'flows/ci/build.yml': 'build: 1\n', 'flows/ci/lint.yml': 'lint: 1\n' },
      // A rescan every half second: the test sees a rename made while the agent runs without waiting 10 minutes.
      { env: { FLOWSYNC_RESCAN_INTERVAL_MS: '500' } },
    );
    const { repo, svc, env } = user;
    const git = gitIn(repo.root);
    git('init', '-q', '-b', 'main');
    git('remote', 'add', 'origin', 'git@github.com:acme/app.git');
    const stored = (name: string) => serviceTree(svc.read, 'acme', name);

    const first = user.start(repo.root);
    await first.waitFor(/Watching 1 repository/, 60_000);
    expect(first.output()).toContain(`acme/app (main, ${repo.root}): 1 flow, 2 files, in sync`);
    first.signal('SIGINT');
    expect(await first.exitWithin()).toBe(0);
    expect(Object.keys(stored('app'))).toHaveLength(2);

    // Renamed on origin while the agent was stopped: said at start, and synced under the old name until confirmed.
    git('remote', 'set-url', 'origin', 'git@github.com:acme/app2.git');
    const renameLine =
      `acme/app is now acme/app2 on origin: run \`flowsync start ${repo.root} --rename\` to sync it under the ` +
      'new name (until then it syncs as acme/app)';
    const second = user.start();
    await second.waitFor(/Watching 1 repository/, 60_000);
    expect(second.output()).toContain(renameLine);
    expect(second.output()).toContain(`acme/app (main, ${repo.root}): 1 flow, 2 files, in sync`);
    repo.write('flows/ci/build.yml', 'build: 2\n');
    await eventually(() => expect(stored('app')['flows/ci/build.yml']).toBe('build: 2\n'));
    expect(stored('app2')).toEqual({});

    const status = await runFlowsync(['status'], { env });
    expect(status.stdout).toContain(`acme/app (main)  ${repo.root}  (`);
    expect(status.stdout).toContain(`  ${renameLine}\n`);
    const json = JSON.parse((await runFlowsync(['status', '--json'], { env })).stdout) as {
      owner: string;
      name: string;
      branch: string | null;
      rename: string | null;
    }[];
    expect(json).toMatchObject([{ owner: 'acme', name: 'app', branch: 'main', rename: renameLine }]);
    second.signal('SIGINT');
    expect(await second.exitWithin()).toBe(0);
    // `flowsync sync` (CI) syncs under the old name too, names the service, and warns.
    const synced = await runFlowsync(['sync', repo.root], { env });
    expect(synced.code).toBe(0);
    expect(synced.stdout).toMatch(new RegExp(`acme/app \\(main\\) with ${svc.url}: up to date\n`));
    expect(synced.stderr).toContain(`warning: ${renameLine}\n`);

    // Confirmed: every file goes to the new name; the old name keeps what it had.
    const third = user.start(repo.root, '--rename');
    await third.waitFor(/Watching 1 repository/, 60_000);
    expect(third.output()).toContain(
      `acme/app2 (main, ${repo.root}): synced under its new name from now on; acme/app's files stay on the ` +
        'service (its history keeps them)',
    );
    expect(third.output()).not.toContain('is now acme/app2');
    expect(stored('app2')).toEqual(diskTree(repo.root));
    expect(stored('app')).toEqual({ 'flows/ci/build.yml': 'build: 2\n', 'flows/ci/lint.yml': 'lint: 1\n' });
    repo.write('flows/ci/lint.yml', 'lint: 2\n');
    await third.waitFor(/\d\d:\d\d:\d\d acme\/app2 \(main\): flows\/ci\/lint\.yml updated in \d+ ms\n/);
    expect(stored('app')['flows/ci/lint.yml']).toBe('lint: 1\n');

    // Renamed again while it runs: the next rescan says so, once; a second `start --rename` hands the move over.
    git('remote', 'set-url', 'origin', 'https://github.com/acme/app3');
    await third.waitFor(/acme\/app2 is now acme\/app3 on origin: run `flowsync start .* --rename`/);
    const handed = await runFlowsync(['start', repo.root, '--rename'], { env });
    expect(handed.stderr).toBe('');
    expect(handed.code).toBe(0);
    expect(handed.stdout).toContain(
      `acme/app3 (main, ${repo.root}): 1 flow, 2 files, in sync, synced by the running agent with ${svc.url}`,
    );
    expect(stored('app3')).toEqual(diskTree(repo.root));
    expect(Object.keys(stored('app2'))).toHaveLength(2);
    expect(third.output().match(/is now acme\/app3/g)).toHaveLength(1);

    // Nothing to rename: one line, nothing changed.
    const again = await runFlowsync(['start', repo.root, '--rename'], { env });
    expect(again.code).toBe(2);
    expect(again.stderr).toContain(`syncs as acme/app3, its name now: nothing to rename.`);
    third.signal('SIGINT');
    expect(await third.exitWithin()).toBe(0);

    // A folder flowsync does not sync has no old name: refused before anything is added to the config.
    const configFile = join(user.configDir, 'config.json');
    const config = readFileSync(configFile, 'utf8');
    const other = join(repo.dir, 'other');
    repo.write('../other/flows/x/a.yml', 'a\n');
    const unknown = await runFlowsync(['start', other, '--rename'], { env });
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toContain(`--rename: ${other} is not synced yet`);
    expect(readFileSync(configFile, 'utf8')).toBe(config);
  });
});
