import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterEach, describe, expect, it } from 'vitest';
import { Agent, agentConfigSchema } from '../../src/agent/index.ts';
import { createSecretStore } from '../../src/secrets/index.ts';
import { createAgentApi } from '../../src/window/index.ts';
import { runFlowsync } from '../support/cli.ts';
import { gitIn } from '../support/git.ts';
import { NO_KEYCHAIN, userEnv } from '../support/agent-process.ts';
import { eventually, makeRepo, serviceTree, type TestRepo } from '../support/repo.ts';
import { startTestService, type TestService } from '../support/service.ts';

/**
 * Issue 24, one source per repository and service: a worktree, a second clone or a copy of acme/app is not mixed
 * into the repository another checkout syncs (measured before: a worktree and its repository overwrote and deleted
 * each other's files on the service, both "in sync"). Switching is an explicit act.
 */
let svc: TestService;
let repo: TestRepo;
let agent: Agent | null = null;

afterEach(async () => {
  await agent?.close();
  agent = null;
  await svc.close();
  repo.cleanup();
});

/** acme/app, committed on main, with a worktree on `feat` and a second clone beside it. */
async function checkouts() {
  svc = await startTestService();
  repo = makeRepo({ 'flows/ci/build.yml': 'build: 1\n', 'flows/ci/lint.yml': 'lint: 1\n' });
  const git = gitIn(repo.root);
  git('init', '-q', '-b', 'main');
  git('remote', 'add', 'origin', 'git@github.com:acme/app.git');
  git('add', '-A');
  git('commit', '-q', '-m', 'main');
  const worktree = join(repo.dir, 'app-feat');
  git('worktree', 'add', '-q', '-b', 'feat', worktree);
  const clone = join(repo.dir, 'app-clone');
  gitIn(repo.dir)('clone', '-q', repo.root, clone);
  gitIn(clone)('remote', 'set-url', 'origin', 'git@github.com:acme/app.git');
  return { worktree, clone, stored: () => serviceTree(svc.read, 'acme', 'app') };
}

function openAgent(): Promise<Agent> {
  return Agent.open({
    config: agentConfigSchema.parse({ serviceUrl: svc.url }),
    statePath: join(repo.dir, 'state.db'),
    secrets: createSecretStore({ FLOWSYNC_TOKEN: svc.tokens.user, FLOWSYNC_ADMIN_TOKEN: svc.tokens.admin }),
    timings: { presenceIntervalMs: 100, retryBaseMs: 50, retryMaxMs: 200 },
  });
}

describe('one source per repository and service', () => {
  it('refuses a worktree and a second clone, naming the source; --source switches, and the old one stops', async () => {
    const { worktree, clone, stored } = await checkouts();
    agent = await openAgent();
    const first = await agent.addRepository(repo.root);
    await first.engine.initialSync();
    const before = stored();
    expect(Object.keys(before)).toHaveLength(2);

    await expect(agent.addRepository(worktree)).rejects.toThrow(
      `not syncing: acme/app is synced from ${repo.root} (this folder is a worktree of it); ` +
        `\`flowsync start ${worktree} --source\` syncs from this checkout instead`,
    );
    await expect(agent.addRepository(clone)).rejects.toThrow('(this folder is another clone)');
    expect(agent.roots()).toEqual([repo.root]);

    // Syncing from the worktree instead is one explicit act: the repository stops, and says why.
    await agent.watchAll();
    const feat = await agent.addAndStart(worktree, { source: true });
    expect(agent.describe(repo.root)).toMatchObject({
      status: null,
      syncedFrom: worktree,
      reason: expect.stringContaining(`is synced from ${worktree}`) as string,
    });
    // The window shows it as synced elsewhere, not paused: resuming it would do nothing (issue 39).
    const shown = (await createAgentApi(agent).status({})).repositories.find(
      (view) => view.root === repo.root,
    );
    expect(shown).toMatchObject({ phase: 'elsewhere', paused: false });
    repo.write('flows/ci/build.yml', 'build: from the old source\n');
    gitIn(worktree)('checkout', '-q', 'feat');
    writeFileSync(join(worktree, 'flows/ci/lint.yml'), 'lint: feat\n');
    await eventually(() => expect(stored()['flows/ci/lint.yml']).toBe('lint: feat\n'));
    await sleep(500);
    expect(stored()['flows/ci/build.yml']).toBe('build: 1\n');
    expect(feat.engine.status().counts.conflicts).toBe(0);

    // Removed from flowsync, the worktree is no one's source any more: the repository may take it back.
    await agent.remove(worktree);
    await expect(agent.addRepository(repo.root)).resolves.toBeDefined();
  });

  it('`flowsync sync` of a second checkout exits 2 with the line, and sends nothing', async () => {
    const { worktree, stored } = await checkouts();
    const env = {
      ...userEnv(join(repo.dir, 'home'), svc),
      ...NO_KEYCHAIN,
    };
    expect((await runFlowsync(['sync', repo.root], { env })).code).toBe(0);
    writeFileSync(join(worktree, 'flows/ci/build.yml'), 'build: worktree\n');
    const refused = await runFlowsync(['sync', worktree], { env });
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain('not syncing: acme/app is synced from');
    expect(refused.stderr).toContain('(this folder is a worktree of it)');
    expect(stored()['flows/ci/build.yml']).toBe('build: 1\n');
  });
});
