import { afterEach, describe, expect, it } from 'vitest';
import { engineOnService, type EngineOnService } from '../support/engine.ts';
import { eventually, serviceTree } from '../support/repo.ts';
import { readDatabase } from '../support/service.ts';

/**
 * Issue 41: a file a teammate deleted on the service (and confirmed) is deleted there for every checkout's first
 * round too. A checkout made the source with `--source`, renamed, or with a fresh state re-uploaded 149 such files
 * without a hold or a conflict. Ada (A) and Bob (B) are two engines with their own states on one real service.
 */
let setup: EngineOnService;

afterEach(async () => {
  await setup?.close();
});

describe('a file deleted on the service, still in a checkout that syncs for the first time', () => {
  it('is a conflict that names who deleted it, not re-created; "keep mine" sends it again', async () => {
    setup = await engineOnService({ 'flows/ci/build.yml': 'build: 1\n', 'flows/ci/old.yml': 'old: 1\n' });
    const a = setup.engine({ writer: 'ada@laptop:~/app' });
    await a.engine.initialSync();
    const service = () => serviceTree(readDatabase(setup.svc.dbPath), 'acme', 'app');
    setup.repo.remove('flows/ci/old.yml');
    await a.engine.syncOnce();
    expect(Object.keys(service())).toEqual(['flows/ci/build.yml']);

    // Bob's clone still has the file (made before Ada deleted it), and a state that knows nothing yet.
    const { harness: b } = setup.otherCheckout(
      {
        'flows/ci/build.yml': 'build: 1\n',
        'flows/ci/old.yml': 'old: 1\n',
        'flows/ci/new.yml': 'new\n',
      },
      'bob@desk:~/app',
    );
    await b.engine.initialSync();

    // Not re-created; Bob's other new file went (its flow is not held for the one in conflict).
    expect(Object.keys(service()).sort()).toEqual(['flows/ci/build.yml', 'flows/ci/new.yml']);
    expect(b.engine.status().counts.conflicts).toBe(1);
    expect(b.engine.status().message).toContain('1 file is in conflict');
    const conflicts = b.state.conflicts(b.engine.repoId);
    expect(conflicts).toEqual([
      expect.objectContaining({
        flowPath: 'flows/ci',
        path: 'old.yml',
        serviceHash: null,
        writtenBy: 'ada@laptop:~/app',
      }),
    ]);

    // Bob keeps his: sent again, on top of the deletion.
    await b.engine.service.resolve([{ flowPath: 'flows/ci', path: 'old.yml' }], 'mine');
    await eventually(() => expect(service()['flows/ci/old.yml']).toBe('old: 1\n'));
    expect(b.engine.status().counts.conflicts).toBe(0);
  });
});
