import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { Agent, agentConfigSchema } from '../../src/agent/index.ts';
import { createAgentApi, type AgentApi } from '../../src/window/index.ts';
import { createSecretStore } from '../../src/secrets/index.ts';
import { eventually, makeRepo, type TestRepo } from '../support/repo.ts';
import { startTestService, type TestService } from '../support/service.ts';

/**
 * Issue 25, paused everywhere, as a review of it found: a paused repository still sent its repo-config.json within a
 * second, the window's "Delete them on the service" on a paused one said "0 deleted" and armed the deletion for the
 * resume, and a repository paused while its folder was not there was in no list at all.
 */
let svc: TestService;
let repo: TestRepo;
let agent: Agent;
let api: AgentApi;

async function openAgent(repositories: unknown[] = []): Promise<void> {
  agent = await Agent.open({
    config: agentConfigSchema.parse({ serviceUrl: svc.url, repositories }),
    statePath: join(repo.dir, 'state.db'),
    secrets: createSecretStore({ FLOWSYNC_TOKEN: svc.tokens.user, FLOWSYNC_ADMIN_TOKEN: svc.tokens.admin }),
    timings: { presenceIntervalMs: 100, retryBaseMs: 50, retryMaxMs: 200 },
  });
  await agent.addConfigured();
  await agent.watchAll();
  api = createAgentApi(agent);
}

beforeEach(async () => {
  svc = await startTestService();
  repo = makeRepo({ 'flows/hello/main.yaml': 'hello\n' });
});
afterEach(async () => {
  await agent?.close();
  await svc.close();
  repo.cleanup();
});

const configs = () =>
  svc
    .read<{ config: string }>('SELECT config FROM repo_configs WHERE owner = ? AND name = ?', 'local', 'repo')
    .map((row) => JSON.parse(row.config) as unknown);

describe('a paused repository', () => {
  it('sends nothing: not its repo-config.json, and no action that would send is taken', async () => {
    await openAgent();
    const { root } = await api.addRepository({ path: repo.root });
    await api.pauseRepository({ root });
    repo.write('.flowsync/repo-config.json', JSON.stringify({ editor: 'vim' }));
    // Several checks of the file (every 100 ms here): none sends it.
    await sleep(800);
    expect(configs()).toEqual([]);
    await expect(api.settleDeletions({ root, choice: 'delete' })).rejects.toThrow(
      `local/repo is paused: resume it first (Resume, or \`flowsync resume ${root}\`), then settle this.`,
    );
    await expect(api.resolveConflicts({ root, side: 'mine' })).rejects.toThrow(/is paused: resume it first/);
    // Putting files back on disk sends nothing: allowed.
    expect(await api.settleDeletions({ root, choice: 'restore' })).toEqual({
      deleted: 0,
      restored: 0,
      notWritten: [],
      kept: [],
    });

    await api.resumeRepository({ root });
    await eventually(() => expect(configs()).toEqual([{ editor: 'vim' }]));
  });

  it('is listed as paused when its folder is not there at start, and `resume` looks for it', async () => {
    const gone = join(repo.dir, 'not-mounted');
    await openAgent([{ path: gone, enabled: false, pausedAt: '2026-11-25T10:00:00.000Z' }]);
    expect(agent.roots()).toEqual([gone]);
    const view = (await api.status({})).repositories[0]!;
    expect(view).toMatchObject({
      root: gone,
      phase: 'paused',
      paused: true,
      pausedSince: '2026-11-25T10:00:00.000Z',
    });
    await api.resumeRepository({ root: gone });
    expect(agent.missing()).toEqual([gone]);
  });
});
