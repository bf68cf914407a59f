import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createClient } from '../../src/client/index.ts';
import { Hasher, SyncEngine, SyncState } from '../../src/sync/index.ts';
import { diskTree, eventually, makeRepo, serviceTree, type TestRepo } from '../support/repo.ts';
import { startTestService, type TestService } from '../support/service.ts';

/**
 * A read error at upload time (issue 20, finding 3): a flow that lost a file is sent as a full listing, and the
 * service drops whatever that listing does not name. A file of it that cannot be read just then must not be left
 * out of the listing, or the service deletes it. The fault is real: the reading worker thread is terminated each
 * time it is handed that file, which the hasher reports as unreadable after two tries.
 */
let svc: TestService | null = null;
let repo: TestRepo | null = null;
let close: (() => Promise<void>) | null = null;

afterEach(async () => {
  await close?.();
  close = null;
  repo?.cleanup();
  repo = null;
  await svc?.close();
  svc = null;
});

describe('a file that cannot be read when its flow is sent as a full listing', () => {
  it('stays on the service, and the deletion beside it goes once it can be read', async () => {
    svc = await startTestService();
    repo = makeRepo({
      'flows/a/main.yaml': 'main\n',
      'flows/a/keep.yaml': 'keep\n',
      'flows/a/gone.yaml': 'gone\n',
    });
    let breaking = false;
    const hasher = new Hasher(2, {
      onDispatch: (worker, files) => {
        if (breaking && files.includes('flows/a/keep.yaml')) void worker.terminate();
      },
    });
    const client = createClient({
      baseUrl: svc.url,
      auth: { userToken: svc.tokens.user },
      retry: { attempts: 1 },
    });
    const state = new SyncState(join(repo.dir, 'state.db'));
    const engine = new SyncEngine({
      repo: { root: repo.root, owner: 'acme', name: 'app', flowRoots: ['flows'] },
      client,
      state,
      hasher,
      serviceKey: svc.url,
      retryBaseMs: 50,
      retryMaxMs: 300,
      presenceIntervalMs: 100,
    });
    close = async () => {
      await engine.stop();
      await hasher.close();
      await client.close();
      state.close();
    };
    const stored = () => serviceTree(svc!.read, 'acme', 'app');
    await engine.start();
    expect(stored()).toEqual(diskTree(repo.root));

    breaking = true;
    repo.remove('flows/a/gone.yaml');
    await eventually(() =>
      expect(state.warnings(engine.repoId)).toEqual([
        { flowPath: 'flows/a', path: 'keep.yaml', warning: 'unreadable' },
      ]),
    );
    // Rounds run meanwhile (the back-off's looks): none may drop the file it could not read.
    await engine.sync();
    expect(stored()['flows/a/keep.yaml']).toBe('keep\n');

    breaking = false;
    await eventually(() => expect(stored()).toEqual(diskTree(repo!.root)));
    expect(state.warnings(engine.repoId)).toEqual([]);
  });
});
