import { createHash } from 'node:crypto';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { RepoConfigFilePublisher } from '../../src/agent/repo-config-file.ts';
import { createClient, type RemoteClient } from '../../src/client/index.ts';
import { RepoConfigBase, SyncState } from '../../src/sync/index.ts';
import { makeRepo, type TestRepo } from '../support/repo.ts';
import { startTestService, type TestService } from '../support/service.ts';

/**
 * The look at `.flowsync/repo-config.json` (once a second) and a save from the window send on the same base: run
 * side by side, the checkout met its own hand edit, sent a moment earlier, as a teammate's conflict, and the save
 * ("take mine") answered `record: null` (test/window/bridge.test.ts failed 1 run in 5). A real service, the
 * checkout's publisher as the agent runs it, on a real state file.
 */
let svc: TestService | null = null;
let repo: TestRepo | null = null;
let client: RemoteClient | null = null;
let state: SyncState | null = null;
afterEach(async () => {
  state?.close();
  await client?.close();
  await svc?.close();
  repo?.cleanup();
  [svc, repo, client, state] = [null, null, null, null];
});

const onService = async (svc: TestService) =>
  svc
    .read<{ config: string }>("SELECT config FROM repo_configs WHERE owner = 'acme' AND name = 'app'")
    .map((row) => JSON.parse(row.config) as unknown);

describe("a repository config's look and a save from the window", () => {
  it('run one at a time: a save that takes mine over a hand edit the look is sending is no conflict with itself', async () => {
    svc = await startTestService();
    repo = makeRepo({ '.flowsync/repo-config.json': '{ "editor": "vim" }\n' });
    client = createClient({ baseUrl: svc.url, auth: { userToken: svc.tokens.user }, retry: { attempts: 1 } });
    state = new SyncState(join(repo.dir, 'state.db'));
    const base = new RepoConfigBase(state.db, state.ensureRepo(repo.root, svc.url, 'acme', 'app'));
    const publisher = new RepoConfigFilePublisher(repo.root, 'acme', 'app', client, base, async () => true);
    await publisher.check();
    expect(await onService(svc)).toEqual([{ editor: 'vim' }]);

    // A hand edit, and at the same moment the window's save of the form over it (the user chose theirs).
    repo.write('.flowsync/repo-config.json', '{ "editor": "vim", "user": "ada" }\n');
    const handEdit = createHash('sha256').update('{ "editor": "vim", "user": "ada" }\n').digest('hex');
    const [, saved] = await Promise.all([
      publisher.check(),
      publisher.save({ editor: 'code' }, handEdit, true),
    ]);

    expect(saved.record).toMatchObject({ editor: 'code' });
    expect(publisher.conflict()).toBeNull();
    expect(publisher.problem).toBeNull();
    expect(await onService(svc)).toEqual([{ editor: 'code' }]);
    // The next look finds the saved file is what the service has: nothing more is sent, no conflict appears.
    await publisher.check();
    expect(publisher.conflict()).toBeNull();
    expect(await onService(svc)).toEqual([{ editor: 'code' }]);
  });
});
