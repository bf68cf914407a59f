import { hostname, userInfo } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { Agent, agentConfigSchema } from '../../src/agent/index.ts';
import { createSecretStore } from '../../src/secrets/index.ts';
import { createAgentApi } from '../../src/window/index.ts';
import { startFaultProxy, type FaultProxy } from '../support/fault-proxy.ts';
import { eventually, makeRepo, serviceTree, type TestRepo } from '../support/repo.ts';
import { startTestService, type TestService } from '../support/service.ts';

/**
 * Issue 23, the agent's side: it names each checkout in the service's history, learns once what the service can
 * do, and says once what a service of the spec alone cannot protect.
 */
let svc: TestService;
let proxy: FaultProxy | null = null;
let repo: TestRepo;
let agent: Agent;

afterEach(async () => {
  await agent?.close();
  await proxy?.close();
  proxy = null;
  await svc.close();
  repo.cleanup();
});

async function openAgent(url: string): Promise<Agent> {
  return Agent.open({
    config: agentConfigSchema.parse({ serviceUrl: url }),
    statePath: join(repo.dir, 'state.db'),
    secrets: createSecretStore({ FLOWSYNC_TOKEN: svc.tokens.user, FLOWSYNC_ADMIN_TOKEN: svc.tokens.admin }),
    timings: { presenceIntervalMs: 100, retryBaseMs: 50, retryMaxMs: 200 },
  });
}

describe("the agent on a team's service", () => {
  it('names this checkout as the writer of every version it sends, and finds nothing to warn of', async () => {
    svc = await startTestService();
    repo = makeRepo({ 'flows/ci/build.yml': 'steps: []\n' });
    agent = await openAgent(svc.url);
    const watched = await agent.addRepository(repo.root);
    await watched.engine.initialSync();
    await eventually(() =>
      expect(serviceTree(svc.read, 'local', 'repo')).toEqual({ 'flows/ci/build.yml': 'steps: []\n' }),
    );
    const writers = svc.read<{ written_by: string }>('SELECT written_by FROM file_versions');
    // The test's HOME is a temporary folder, so the checkout is named by its full path.
    // Its label, and its own id beside it (issue 41).
    expect(writers).toHaveLength(1);
    const label = `${userInfo().username}@${hostname()}:${repo.root}`;
    expect(writers[0]!.written_by.startsWith(`${label} (checkout `)).toBe(true);
    expect(writers[0]!.written_by.slice(label.length)).toMatch(/^ \(checkout [0-9a-f]{12}\)$/);
    expect(await agent.serviceInfo.capabilities()).toMatchObject({
      bases: true,
      history: true,
      retention_days: 30,
    });
    expect(await agent.serviceInfo.limits()).toBeNull();
    expect((await createAgentApi(agent).status({})).serviceLimits).toBeNull();
  });

  it('says once that a service of the spec alone keeps no history and cannot detect overwrites', async () => {
    svc = await startTestService();
    repo = makeRepo({ 'flows/ci/build.yml': 'steps: []\n' });
    // A service of the spec alone: the 20 functions, and a 404 envelope for anything else.
    proxy = await startFaultProxy(svc.url);
    proxy.fault = (path) =>
      path.includes('/svc/flow_def/public/capabilities')
        ? {
            status: 404,
            headers: { 'content-type': 'application/json' },
            body: JSON.stringify({ status: 'error', errorMessage: `No function at ${path}` }),
          }
        : null;
    agent = await openAgent(proxy.url);
    const limits = await agent.serviceInfo.limits();
    expect(limits).toContain('keeps no history and cannot detect overwrites');
    expect(limits).toContain(proxy.url);
    // Asked once: the answer is kept for the agent's life; the window's status says it too.
    await agent.serviceInfo.limits();
    expect((await createAgentApi(agent).status({})).serviceLimits).toBe(limits);
    expect(proxy.requests.filter((path) => path.includes('capabilities'))).toHaveLength(1);
    // And syncing goes on as with any service of the spec.
    const watched = await agent.addRepository(repo.root);
    await watched.engine.initialSync();
    await eventually(() =>
      expect(serviceTree(svc.read, 'local', 'repo')).toEqual({ 'flows/ci/build.yml': 'steps: []\n' }),
    );
  });
});
