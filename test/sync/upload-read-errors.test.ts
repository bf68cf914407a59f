import { afterEach, describe, expect, it } from 'vitest';
import { Hasher } from '../../src/sync/index.ts';
import { engineOnService, type EngineOnService } from '../support/engine.ts';
import { startSpecOnlyFront, type FaultProxy } from '../support/fault-proxy.ts';
import { diskTree, eventually, serviceTree } from '../support/repo.ts';

/**
 * A read error at upload time (issue 20, finding 3): a flow that lost a file is sent as a full listing, and the
 * service drops whatever that listing does not name. A file of it that cannot be read just then must not be left
 * out of the listing, or the service deletes it. The fault: the hasher's read of that file fails (EIO), which it
 * reports as unreadable.
 */
let on: EngineOnService | null = null;
let front: FaultProxy | null = null;

afterEach(async () => {
  await on?.close();
  on = null;
  await front?.close();
  front = null;
});

// Full listings are what a service of the spec alone gets (one that takes bases gets explicit deletions).
describe('a file that cannot be read when its flow is sent as a full listing (a service of the spec alone)', () => {
  it('stays on the service, and the deletion beside it goes once it can be read', async () => {
    let breaking = false;
    const hasher = new Hasher({
      beforeRead: (path) => {
        if (breaking && path === 'flows/a/keep.yaml') throw Object.assign(new Error('I/O'), { code: 'EIO' });
      },
    });
    on = await engineOnService({
      'flows/a/main.yaml': 'main\n',
      'flows/a/keep.yaml': 'keep\n',
      'flows/a/gone.yaml': 'gone\n',
    });
    const { svc, repo } = on;
    front = await startSpecOnlyFront(svc.url);
    const { engine, state } = on.engine({ hasher, url: front.url });
    const stored = () => serviceTree(svc.read, 'acme', 'app');
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
    await eventually(() => expect(stored()).toEqual(diskTree(repo.root)));
    expect(state.warnings(engine.repoId)).toEqual([]);
  });
});
