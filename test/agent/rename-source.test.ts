import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { Agent, agentConfigSchema } from '../../src/agent/index.ts';
import { createSecretStore } from '../../src/secrets/index.ts';
import { gitIn } from '../support/git.ts';
import { makeRepo, serviceTree, type TestRepo } from '../support/repo.ts';
import { startTestService, type TestService } from '../support/service.ts';

/**
 * Issue 24: a checkout whose origin now names a repository that another checkout syncs is not moved over it
 * silently. `--rename` alone is refused, naming that checkout; `--rename --source` moves it, the other stops, and
 * the moved checkout's fresh state learns the service's files first: its different copy of a file the other
 * checkout wrote is a conflict, not an overwrite.
 */
let svc: TestService;
let a: TestRepo;
let b: TestRepo;
let agent: Agent | null = null;

afterEach(async () => {
  await agent?.close();
  agent = null;
  await svc.close();
  a.cleanup();
  b.cleanup();
});

function checkout(files: Record<string, string>, remote: string): TestRepo {
  const repo = makeRepo(files);
  const git = gitIn(repo.root);
  git('init', '-q', '-b', 'main');
  git('remote', 'add', 'origin', remote);
  return repo;
}

describe('a rename onto a name another checkout syncs', () => {
  it('is refused without --source; with it, the other stops and what differs is a conflict', async () => {
    svc = await startTestService();
    a = checkout(
      { 'flows/ci/build.yml': 'build: a\n', 'flows/ci/lint.yml': 'lint: a\n' },
      'git@github.com:acme/app.git',
    );
    b = checkout({ 'flows/ci/build.yml': 'build: b\n' }, 'git@github.com:acme/app2.git');
    agent = await Agent.open({
      config: agentConfigSchema.parse({ serviceUrl: svc.url }),
      statePath: join(a.dir, 'state.db'),
      secrets: createSecretStore({ FLOWSYNC_TOKEN: svc.tokens.user, FLOWSYNC_ADMIN_TOKEN: svc.tokens.admin }),
      timings: { presenceIntervalMs: 100, retryBaseMs: 50, retryMaxMs: 200 },
    });
    await (await agent.addRepository(a.root)).engine.initialSync();
    await (await agent.addRepository(b.root)).engine.initialSync();
    gitIn(a.root)('remote', 'set-url', 'origin', 'git@github.com:acme/app2.git');

    await expect(agent.rename(a.root)).rejects.toThrow(
      `acme/app2 is synced from ${b.root}: \`flowsync start ${a.root} --rename --source\` syncs it from this ` +
        'checkout instead.',
    );
    expect(agent.describe(a.root)).toMatchObject({ owner: 'acme', name: 'app', status: { phase: 'idle' } });

    const moved = await agent.addAndStart(a.root, { rename: true, source: true });
    expect(moved.identity).toMatchObject({ owner: 'acme', name: 'app2' });
    expect(agent.describe(b.root)).toMatchObject({ status: null, syncedFrom: a.root });
    expect(serviceTree(svc.read, 'acme', 'app2')).toEqual({
      'flows/ci/build.yml': 'build: b\n',
      'flows/ci/lint.yml': 'lint: a\n',
    });
    expect(moved.engine.status().counts.conflicts).toBe(1);
    expect(serviceTree(svc.read, 'acme', 'app')).toEqual({
      'flows/ci/build.yml': 'build: a\n',
      'flows/ci/lint.yml': 'lint: a\n',
    });
  });
});
