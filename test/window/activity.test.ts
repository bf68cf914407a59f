import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { Agent, agentConfigSchema } from '../../src/agent/index.ts';
import { createAgentApi, type ActivityEntry, type AgentApi } from '../../src/window/index.ts';
import { describeFileWarning as describeWarning } from '../../src/protocol/index.ts';
import { createSecretStore } from '../../src/secrets/index.ts';
import { startFaultProxy, type FaultProxy } from '../support/fault-proxy.ts';
import { eventually, makeRepo, type TestRepo } from '../support/repo.ts';
import { startTestService, type TestService } from '../support/service.ts';

/** What the window's Sync screen reads from the agent: flows and files with their states, and Recent activity. */

let svc: TestService;
let proxy: FaultProxy;
let repo: TestRepo;
let agent: Agent;
let api: AgentApi;

beforeEach(async () => {
  svc = await startTestService();
  proxy = await startFaultProxy(svc.url);
  repo = makeRepo({ 'flows/hello/main.yaml': 'hello\n', 'flows/hello/logo.png': Buffer.from([0x89, 0, 1]) });
  agent = await Agent.open({
    config: agentConfigSchema.parse({ serviceUrl: proxy.url }),
    statePath: join(repo.dir, 'state.db'),
    secrets: createSecretStore({ FLOWSYNC_TOKEN: svc.tokens.user, FLOWSYNC_ADMIN_TOKEN: svc.tokens.admin }),
    timings: { presenceIntervalMs: 100, retryBaseMs: 50, retryMaxMs: 200 },
  });
  await agent.watchAll();
  api = createAgentApi(agent);
});
afterEach(async () => {
  await agent.close();
  await proxy.close();
  await svc.close();
  repo.cleanup();
});

const entries = async () => (await api.activity({})).entries;
const brief = (entry: ActivityEntry) =>
  [entry.kind, entry.flowPath && entry.path ? `${entry.flowPath}/${entry.path}` : entry.flowPath]
    .filter(Boolean)
    .join(' ');

describe('Recent activity', () => {
  it('names the files each round sent, created, changed and deleted, newest first', async () => {
    const { root } = await api.addRepository({ path: repo.root });
    expect((await entries()).map(brief)).toEqual(['created flows/hello/main.yaml']);

    repo.write('flows/hello/second.yaml', 'second\n');
    await eventually(async () =>
      expect((await entries()).map(brief)[0]).toBe('created flows/hello/second.yaml'),
    );
    repo.write('flows/hello/main.yaml', 'hello again\n');
    await eventually(async () =>
      expect((await entries()).map(brief)[0]).toBe('updated flows/hello/main.yaml'),
    );
    repo.remove('flows/hello/second.yaml');
    await eventually(async () =>
      expect((await entries()).map(brief)[0]).toBe('deleted flows/hello/second.yaml'),
    );
    expect((await entries()).every((entry) => entry.root === root && entry.repository === 'local/repo')).toBe(
      true,
    );
  });

  it('tells a file newly not sent, with the reason and the fix; not those skipped before', async () => {
    await api.addRepository({ path: repo.root });
    repo.write('flows/hello/photo.png', Buffer.from([0x89, 0x50, 0x4e, 0x47, 0, 0xff]));
    await eventually(async () =>
      expect((await entries())[0]).toMatchObject({
        kind: 'skipped',
        flowPath: 'flows/hello',
        path: 'photo.png',
        message: 'binary (not UTF-8 text): add it to .gitignore',
      }),
    );
    expect((await entries()).map(brief)).toEqual([
      'skipped flows/hello/photo.png',
      'created flows/hello/main.yaml',
    ]);
  });

  it('tells a file not sent once, also when a branch switch takes it away and brings it back (issue 25)', async () => {
    await api.addRepository({ path: repo.root });
    // Away (another branch), then back with the main file changed: a round in between, and one after.
    repo.remove('flows/hello/logo.png');
    repo.write('flows/hello/main.yaml', 'on the other branch\n');
    await eventually(async () =>
      expect((await entries()).map(brief)[0]).toBe('updated flows/hello/main.yaml'),
    );
    repo.write('flows/hello/logo.png', Buffer.from([0x89, 0, 1]));
    repo.write('flows/hello/main.yaml', 'back\n');
    await eventually(async () =>
      expect((await entries()).filter((entry) => entry.kind === 'updated')).toHaveLength(2),
    );
    expect((await entries()).filter((entry) => entry.kind === 'skipped')).toEqual([]);
  });

  it('sums up a large round in one entry', async () => {
    await api.addRepository({ path: repo.root });
    for (let n = 0; n < 25; n++) repo.write(`flows/many/file-${n}.yaml`, `${n}\n`);
    await eventually(async () =>
      expect((await entries())[0]).toMatchObject({
        kind: 'sent',
        // Which flow, by name: "Sent 1 flow: …" did not say (issue 25).
        message: 'flows/many',
        counts: { flows: 1, created: 25, updated: 0, deleted: 0 },
      }),
    );
  });

  it('tells a refused flow with the service’s message, and the service going away and back', async () => {
    await api.addRepository({ path: repo.root });
    proxy.fault = (path) =>
      path.includes('sync_batch')
        ? {
            status: 422,
            body: JSON.stringify({ status: 'error', errorMessage: 'Flow too large for this plan' }),
          }
        : null;
    repo.write('flows/big/flow.yaml', 'big\n');
    await eventually(async () =>
      expect((await entries())[0]).toMatchObject({
        kind: 'refused',
        flowPath: 'flows/big',
        message: 'Flow too large for this plan (HTTP 422)',
      }),
    );
    const detail = await api.repositoryDetail({ root: repo.root });
    expect(detail.flows.find((flow) => flow.name === 'big')).toMatchObject({
      state: 'refused',
      message: 'Flow too large for this plan (HTTP 422)',
    });

    proxy.fault = () => ({
      status: 503,
      body: JSON.stringify({ status: 'error', errorMessage: 'Restarting' }),
    });
    repo.write('flows/hello/main.yaml', 'offline edit\n');
    await eventually(async () =>
      expect((await entries())[0]).toMatchObject({
        kind: 'unavailable',
        message: expect.stringMatching(/Restarting/),
      }),
    );
    proxy.fault = () => null;
    await eventually(async () =>
      expect((await entries()).slice(0, 2).map(brief)).toEqual(['updated flows/hello/main.yaml', 'online']),
    );
  });
});

describe('flows and files', () => {
  it('lists each flow with its state, and its files with why one is not sent; a paused repository keeps its counts', async () => {
    await api.addRepository({ path: repo.root });
    expect((await api.repositoryDetail({ root: repo.root })).flows).toEqual([
      {
        flowPath: 'flows/hello',
        name: 'hello',
        files: 2,
        pending: 0,
        notSent: 1,
        conflicts: 0,
        newer: 0,
        state: 'synced',
        message: null,
      },
    ]);
    expect((await api.flowFiles({ root: repo.root, flowPath: 'flows/hello' })).files).toEqual([
      { path: 'logo.png', state: 'not-sent', reason: 'binary (not UTF-8 text): add it to .gitignore' },
      { path: 'main.yaml', state: 'synced', reason: null },
    ]);
    expect((await api.status({})).repositories[0]!.warnings).toEqual([
      { flowPath: 'flows/hello', path: 'logo.png', warning: 'binary', reason: describeWarning('binary') },
    ]);

    const paused = await api.pauseRepository({ root: repo.root });
    expect(paused).toMatchObject({ phase: 'paused', counts: { flows: 1, files: 2, warnings: 1 } });
    expect(paused.lastSyncAt).not.toBeNull();
    expect((await api.repositoryDetail({ root: repo.root })).flows).toHaveLength(1);
  });
});
