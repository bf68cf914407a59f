import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { Agent, agentConfigSchema } from '../../src/agent/index.ts';
import { createAgentApi } from '../../src/window/index.ts';
import { createSecretStore } from '../../src/secrets/index.ts';
import { startFaultProxy, type FaultProxy } from '../support/fault-proxy.ts';
import { eventually, makeRepo, type TestRepo } from '../support/repo.ts';
import { startTestService, type TestService } from '../support/service.ts';

/**
 * Issue 25 item 6: the window showed a "Hashing files" bar for the whole of an outage. The rescans that run while
 * the service is away end in `offline` as they began, and their last progress came after that status: kept, and
 * shown, until the service was back.
 */
let svc: TestService;
let proxy: FaultProxy;
let repo: TestRepo;
let agent: Agent;

beforeEach(async () => {
  svc = await startTestService();
  proxy = await startFaultProxy(svc.url);
  const files: Record<string, string> = {};
  for (let n = 0; n < 300; n++) files[`flows/gen/step-${n}.yml`] = `step: ${n}\n`;
  repo = makeRepo(files);
  agent = await Agent.open({
    config: agentConfigSchema.parse({ serviceUrl: proxy.url }),
    statePath: join(repo.dir, 'state.db'),
    secrets: createSecretStore({ FLOWSYNC_TOKEN: svc.tokens.user }),
    timings: { presenceIntervalMs: 100, retryBaseMs: 50, retryMaxMs: 200, rescanIntervalMs: 150 },
  });
  await agent.watchAll();
});
afterEach(async () => {
  await agent.close();
  await proxy.close();
  await svc.close();
  repo.cleanup();
});

describe('long work in the window', () => {
  it('shows no progress bar once the work is done, also while the service is away', async () => {
    const api = createAgentApi(agent);
    const { root } = await api.addRepository({ path: repo.root });
    proxy.fault = () => ({ status: 503, body: JSON.stringify({ status: 'error', errorMessage: 'down' }) });
    // Edits while away, each rescanned by the periodic rescans (every 150 ms here).
    for (let round = 0; round < 5; round++) {
      for (let n = 0; n < 300; n += 7) repo.write(`flows/gen/step-${n}.yml`, `step: ${n} edit ${round}\n`);
      await eventually(() => expect(agent.describe(root)?.status?.phase).toBe('unavailable'));
      await new Promise((resolve) => setTimeout(resolve, 400));
    }
    await eventually(() => {
      const described = agent.describe(root)!;
      expect(described.status?.phase).toBe('unavailable');
      expect(described.progress).toBeNull();
    });
    // And it stays so: through several more rescans, still none.
    for (let look = 0; look < 10; look++) {
      await new Promise((resolve) => setTimeout(resolve, 100));
      expect(agent.describe(root)!.progress).toBeNull();
    }
  });
});
