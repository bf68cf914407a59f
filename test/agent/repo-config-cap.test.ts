import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { RepoConfigFilePublisher } from '../../src/agent/repo-config-file.ts';
import { createClient, type RemoteClient } from '../../src/client/index.ts';
import { RepoConfigBase, SyncState } from '../../src/sync/index.ts';
import { startFaultProxy, type FaultProxy } from '../support/fault-proxy.ts';
import { makeRepo, type TestRepo } from '../support/repo.ts';
import { startTestService, type TestService } from '../support/service.ts';

/**
 * A repository config from a service is capped like a flow file (issue 49): a hostile service's 40 MB config in a
 * conflict was stored in the state, sent to the window and written into the checkout. A real service behind a proxy
 * that makes its config large; the checkout's publisher as the agent runs it, on a real state file.
 */
let svc: TestService | null = null;
let proxy: FaultProxy | null = null;
let repo: TestRepo | null = null;
let client: RemoteClient | null = null;
let state: SyncState | null = null;
afterEach(async () => {
  state?.close();
  await client?.close();
  await proxy?.close();
  await svc?.close();
  repo?.cleanup();
  [svc, proxy, repo, client, state] = [null, null, null, null, null];
});

describe('a repository config from the service', () => {
  it('over 1 MiB in a conflict is not taken: not stored, not shown, said, and not asked again at every look', async () => {
    svc = await startTestService();
    proxy = await startFaultProxy(svc.url);
    repo = makeRepo({ '.flowsync/repo-config.json': '{ "editor": "code" }\n' });
    // A teammate's config on the service: this checkout's, sent on "none", is a conflict.
    const teammate = await svc.call(
      'svc/repo_config/public/update',
      { owner: 'acme', name: 'app', editor: 'vim' },
      'user',
    );
    expect(teammate.statusCode).toBe(200);
    const large = 'x'.repeat(2 * 1024 * 1024);
    proxy.rewrite = (path, answer) => {
      if (!path.endsWith('/repo_config/public/update')) return answer;
      const reply = JSON.parse(answer) as { errorData?: { repo_config?: Record<string, unknown> } };
      if (reply.errorData?.repo_config) reply.errorData.repo_config.service_config = large;
      return JSON.stringify(reply);
    };
    client = createClient({
      baseUrl: proxy.url,
      auth: { userToken: svc.tokens.user },
      retry: { attempts: 1 },
    });
    state = new SyncState(join(repo.dir, 'state.db'));
    const repoId = state.ensureRepo(repo.root, proxy.url, 'acme', 'app');
    const base = new RepoConfigBase(state.db, repoId);
    const publisher = new RepoConfigFilePublisher(repo.root, 'acme', 'app', client, base, async () => true);

    await publisher.check();
    const sends = () => proxy!.requests.filter((path) => path.endsWith('/repo_config/public/update')).length;
    expect(sends()).toBe(1);
    // The agent looks at the file once a second: the same file is not sent again for the same refused answer.
    await publisher.check();
    await publisher.check();
    expect(sends()).toBe(1);
    expect(base.conflict()).toBeNull();
    const row = state.db.prepare('SELECT length(conflict) AS bytes FROM repo_config').get() as
      { bytes: number | null } | undefined;
    expect(row?.bytes ?? 0).toBeLessThan(1024);
    expect(`${publisher.problem ?? ''} ${publisher.unsent ?? ''}`).toMatch(/over the 1 MiB a file may be/);
  });
});
