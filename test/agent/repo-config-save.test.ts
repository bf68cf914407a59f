import { execFileSync } from 'node:child_process';
import {
  existsSync,
  lstatSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { Agent, agentConfigSchema } from '../../src/agent/index.ts';
import {
  connectToBridge,
  createAgentApi,
  startBridge,
  statusEvents,
  type Bridge,
} from '../../src/window/index.ts';
import { createSecretStore } from '../../src/secrets/index.ts';
import { makeRepo, type TestRepo } from '../support/repo.ts';
import { startTestService, type TestService } from '../support/service.ts';

/**
 * Saving a repository's config from the window, the way a user does it: the window calls saveRepoConfig on the
 * loopback bridge, the agent sends it to the service (function 7) and writes `.flowsync/repo-config.json`.
 */
let svc: TestService;
let repo: TestRepo;
let agent: Agent;
let bridge: Bridge;
/** A home folder outside the repository, with the file a hostile repository aims at. */
let home: string;
const BASHRC = '# the user\'s own .bashrc\nexport PATH="$HOME/bin:$PATH"\n';

async function openAgent(remote: string) {
  execFileSync('git', ['-C', repo.root, 'init', '-q']);
  execFileSync('git', ['-C', repo.root, 'remote', 'add', 'origin', remote]);
  agent = await Agent.open({
    config: agentConfigSchema.parse({ serviceUrl: svc.url }),
    statePath: join(repo.dir, 'state.db'),
    secrets: createSecretStore({ FLOWSYNC_TOKEN: svc.tokens.user, FLOWSYNC_ADMIN_TOKEN: svc.tokens.admin }),
  });
  const api = createAgentApi(agent);
  bridge = await startBridge({ api, subscribe: statusEvents(agent, api) });
  return connectToBridge(bridge.agentUrl);
}

beforeEach(async () => {
  svc = await startTestService();
  repo = makeRepo({ 'flows/hello/main.yaml': 'hello\n' });
  home = join(repo.dir, 'home');
  mkdirSync(home);
  writeFileSync(join(home, '.bashrc'), BASHRC);
});
afterEach(async () => {
  await bridge?.close();
  await agent?.close();
  await svc.close();
  repo.cleanup();
});

/** Every entry below a folder, links not followed, with its size: what a save may not change outside the repo. */
function listing(folder: string): string[] {
  return readdirSync(folder, { recursive: true, encoding: 'utf8' })
    .sort()
    .map((path) => `${path} ${lstatSync(join(folder, path)).size}`);
}

describe('saving the repository config writes nothing through a link the repository ships', () => {
  const hostile = { editor: 'code', user: '$(touch /tmp/flowsync-pwned)' };

  it('leaves ~/.bashrc byte for byte, with links at every temporary name an earlier flowsync used', async () => {
    const window = await openAgent('git@github.com:acme/app.git');
    const { root } = (await window.call('addRepository', { path: repo.root })) as { root: string };
    mkdirSync(join(repo.root, '.flowsync'));
    // The name the save used was `.flowsync/repo-config.json.<pid>.tmp`, pid of the process that saves: this one
    // (the agent runs in the test's process), and, as a clone cannot know the pid, a range around it.
    for (let pid = Math.max(1, process.pid - 200); pid <= process.pid + 200; pid++)
      symlinkSync(join(home, '.bashrc'), join(repo.root, `.flowsync/repo-config.json.${pid}.tmp`));
    const before = listing(home);

    await window.call('saveRepoConfig', { root, config: hostile, base: null });

    expect(readFileSync(join(home, '.bashrc'), 'utf8')).toBe(BASHRC);
    expect(listing(home)).toEqual(before);
    expect(lstatSync(join(repo.root, '.flowsync/repo-config.json')).isFile()).toBe(true);
    expect(JSON.parse(readFileSync(join(repo.root, '.flowsync/repo-config.json'), 'utf8'))).toEqual(hostile);
  });

  it('creates no file outside the repository through a link that points at nothing yet (~/.bash_aliases)', async () => {
    const window = await openAgent('git@github.com:acme/app.git');
    const { root } = (await window.call('addRepository', { path: repo.root })) as { root: string };
    mkdirSync(join(repo.root, '.flowsync'));
    for (let pid = Math.max(1, process.pid - 200); pid <= process.pid + 200; pid++)
      symlinkSync(join(home, '.bash_aliases'), join(repo.root, `.flowsync/repo-config.json.${pid}.tmp`));

    await window.call('saveRepoConfig', { root, config: hostile, base: null });

    expect(existsSync(join(home, '.bash_aliases'))).toBe(false);
    expect(listing(home)).toEqual([`.bashrc ${BASHRC.length}`]);
  });

  it('replaces a link at .flowsync/repo-config.json itself instead of writing through it', async () => {
    const window = await openAgent('git@github.com:acme/app.git');
    const { root } = (await window.call('addRepository', { path: repo.root })) as { root: string };
    mkdirSync(join(repo.root, '.flowsync'));
    symlinkSync(join(home, '.bashrc'), join(repo.root, '.flowsync/repo-config.json'));

    await window.call('saveRepoConfig', { root, config: hostile, base: null });

    expect(readFileSync(join(home, '.bashrc'), 'utf8')).toBe(BASHRC);
    expect(lstatSync(join(repo.root, '.flowsync/repo-config.json')).isFile()).toBe(true);
  });

  it('still creates .flowsync and leaves no temporary file behind', async () => {
    const window = await openAgent('git@github.com:acme/app.git');
    const { root } = (await window.call('addRepository', { path: repo.root })) as { root: string };
    await window.call('saveRepoConfig', { root, config: { editor: 'vim' }, base: null });
    expect(readdirSync(join(repo.root, '.flowsync'))).toEqual(['repo-config.json']);
  });
});

describe('a repository whose owner has a / (GitLab subgroups)', () => {
  it('saves its config from the window, and the service stores it under that owner', async () => {
    const window = await openAgent('git@gitlab.com:group/sub/app.git');
    const added = (await window.call('addRepository', { path: repo.root })) as { root: string };
    expect(added).toMatchObject({ owner: 'group/sub', name: 'app' });

    const saved = (await window.call('saveRepoConfig', {
      root: added.root,
      config: { editor: 'code' },
      base: null,
    })) as {
      record: unknown;
    };

    expect(saved.record).toMatchObject({ owner: 'group/sub', name: 'app', editor: 'code' });
    const rows = svc.read<{ owner: string; name: string; config: string }>(
      'SELECT owner, name, config FROM repo_configs',
    );
    expect(rows.map((row) => ({ ...row, config: JSON.parse(row.config) }))).toEqual([
      { owner: 'group/sub', name: 'app', config: { editor: 'code' } },
    ]);
  });
});
