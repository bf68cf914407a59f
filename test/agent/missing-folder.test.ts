import { mkdirSync, readFileSync, renameSync, rmdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { AgentApiError, connectToBridge } from '../../src/window/index.ts';
import { agentOnService, writeAgentConfig, type AgentOnService } from '../support/agent-process.ts';
import { runFlowsync } from '../support/cli.ts';
import { gitIn } from '../support/git.ts';
import { diskTree, eventually, serviceTree } from '../support/repo.ts';

/**
 * Issue 24: a repository folder that is not there when the agent starts (a drive not mounted yet) is `missing`,
 * never a new `local/<folder>` repository, and nothing of it is sent or deleted; once the folder appears (here: a
 * folder renamed into place, as a mount makes it appear at once) the agent takes it up by itself, as the
 * repository its git remote names, through the usual rules. Measured before: the agent refused to start at all
 * ("… does not exist"), and with an empty mount point in place it synced the folder as `local/repo`.
 */
let user: AgentOnService | null = null;

afterEach(async () => {
  await user?.close();
  user = null;
});

/** acme/app with 12 files, synced once by a real agent, then stopped. */
async function syncedOnce() {
  const files: Record<string, string> = { 'flows/ci/build.yml': 'build: 1\n' };
  for (let n = 0; n < 11; n++) files[`flows/gen/step-${n}.yml`] = `step: ${n}\n`;
  user = await agentOnService(files);
  const { repo } = user;
  const git = gitIn(repo.root);
  git('init', '-q', '-b', 'main');
  git('remote', 'add', 'origin', 'git@github.com:acme/app.git');
  const first = user.start(repo.root);
  await first.waitFor(/acme\/app \(.*\): 2 flows, 12 files, in sync/);
  await user.stopAgents();
  const svc = user.svc;
  return {
    ...user,
    stored: () => serviceTree(svc.read, 'acme', 'app'),
    repositories: () =>
      svc.read<{ owner: string; name: string }>('SELECT owner, name FROM repos ORDER BY owner, name'),
  };
}

describe('a repository folder not there at start', () => {
  it('is missing, sends and deletes nothing, and is synced by its real name once it appears', async () => {
    const { repo, env, stored, repositories, start, dataDir } = await syncedOnce();
    const before = stored();
    // The drive is not mounted: the folder is elsewhere. A second repository, never synced and with no
    // owner/name in the config, is not there either.
    const drive = join(repo.dir, 'drive');
    mkdirSync(drive);
    renameSync(repo.root, join(drive, 'app'));
    const otherRoot = join(repo.dir, 'other');
    const other = join(drive, 'other');
    mkdirSync(join(other, 'flows/deploy'), { recursive: true });
    gitIn(other)('init', '-q', '-b', 'main');
    gitIn(other)('remote', 'add', 'origin', 'https://github.com/acme/other.git');
    writeAgentConfig(env, [{ path: repo.root }, { path: otherRoot }]);

    const agent = start();
    await agent.waitFor(/Watching 0 repositories \(2 missing\)/);
    expect(agent.output()).toContain(
      `acme/app (${repo.root}): missing: ${repo.root} is gone; syncing resumes when it is back`,
    );
    expect(agent.output()).toContain(
      `?/other (${otherRoot}): missing: ${otherRoot} is gone; syncing resumes when it is back`,
    );
    const status = await runFlowsync(['status'], { env });
    expect(status.code, status.stderr).toBe(0);
    expect(status.stdout).toContain(`now: missing: ${repo.root} is gone; syncing resumes when it is back`);
    expect(status.stdout).toContain(`?/other  ${otherRoot}`);
    // The window's cards, as it reads them from the agent's bridge: missing, with what was synced before.
    const lock = JSON.parse(readFileSync(join(dataDir, 'agent.lock'), 'utf8')) as { bridge: string };
    const bridge = connectToBridge(lock.bridge);
    const { repositories: cards } = (await bridge.call('status', {})) as {
      repositories: { root: string; owner: string; name: string; phase: string; counts: { files: number } }[];
    };
    expect(cards).toEqual([
      expect.objectContaining({ root: otherRoot, owner: '?', name: 'other', phase: 'missing' }),
      expect.objectContaining({
        root: repo.root,
        owner: 'acme',
        name: 'app',
        phase: 'missing',
        counts: expect.objectContaining({ files: 12 }),
      }),
    ]);
    const refused = await bridge.call('syncNow', { root: repo.root }).then(
      () => null,
      (error: unknown) => error,
    );
    expect(refused).toBeInstanceOf(AgentApiError);
    expect((refused as AgentApiError).message).toBe(`${repo.root} is gone; syncing resumes when it is back`);

    // Meanwhile, on the drive: an edit, a new file, and 10 of the 12 files deleted (more than a quarter).
    const away = join(drive, 'app');
    writeFileSync(join(away, 'flows/ci/build.yml'), 'build: 2\n');
    writeFileSync(join(away, 'flows/ci/new.yml'), 'new\n');
    for (let n = 0; n < 10; n++) rmSync(join(away, `flows/gen/step-${n}.yml`));
    writeFileSync(join(other, 'flows/deploy/prod.yml'), 'prod\n');
    await new Promise((resolve) => setTimeout(resolve, 1500));
    expect(stored()).toEqual(before);
    expect(repositories()).toEqual([{ owner: 'acme', name: 'app' }]);

    // The drive is mounted.
    renameSync(away, repo.root);
    renameSync(other, otherRoot);
    await agent.waitFor(/acme\/app \(.*\): .* is there: 2 flows, 3 files, .*10 deletions held/);
    await agent.waitFor(/acme\/other \(.*\): .* is there: 1 flow, 1 file, in sync/);
    // The edit and the new file went; the deletions are held (more than a quarter of the files), not sent.
    await eventually(() =>
      expect(stored()).toEqual({
        ...before,
        'flows/ci/build.yml': 'build: 2\n',
        'flows/ci/new.yml': 'new\n',
      }),
    );
    expect(serviceTree(user!.svc.read, 'acme', 'other')).toEqual(diskTree(otherRoot));
    expect(repositories()).toEqual([
      { owner: 'acme', name: 'app' },
      { owner: 'acme', name: 'other' },
    ]);
    expect(agent.output()).not.toMatch(/local\//);
  }, 60_000);

  it('an empty mount point in its place is missing too, never local/<folder>', async () => {
    const { repo, env, stored, repositories, start } = await syncedOnce();
    const before = stored();
    const away = join(repo.dir, 'drive');
    renameSync(repo.root, away);
    mkdirSync(repo.root); // the mount point, nothing mounted on it
    writeAgentConfig(env, [{ path: repo.root }]);

    const agent = start();
    await agent.waitFor(/Watching \d+ repositor/);
    expect(agent.output()).not.toMatch(/local\//);
    expect(agent.output()).toContain(`acme/app (${repo.root}): missing:`);
    expect(agent.output()).toContain('Watching 0 repositories (1 missing)');

    rmdirSync(repo.root);
    renameSync(away, repo.root);
    await agent.waitFor(/acme\/app \(.*\): .* is there: 2 flows, 12 files, in sync/);
    repo.write('flows/ci/build.yml', 'build: 3\n');
    await eventually(() => expect(stored()).toEqual({ ...before, 'flows/ci/build.yml': 'build: 3\n' }));
    expect(repositories()).toEqual([{ owner: 'acme', name: 'app' }]);
    expect(agent.output()).not.toMatch(/local\//);
  }, 60_000);
});
