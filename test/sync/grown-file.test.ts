import { truncateSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { describeFileWarning } from '../../src/protocol/index.ts';
import { engineOnService, testEngine, type EngineHarness, type EngineOnService } from '../support/engine.ts';
import { startSpecOnlyFront, type FaultProxy } from '../support/fault-proxy.ts';
import { sha256 } from '../support/flows.ts';
import { eventually, makeRepo, serviceTree, type TestRepo } from '../support/repo.ts';

/**
 * Issue 36: a file that grows over 1 MiB on disk is not sent (a warning), and the agent took it for gone: it sent a
 * deletion of it, so the teammates' copy was deleted on the service, and counted it as a held deletion that
 * "restore them on disk" did not restore. Only a file gone from disk is a deletion: the service keeps its version,
 * and the file's line says why it is not sent.
 */
const TWO_MIB = 'x'.repeat(2 * 1024 * 1024);
let setup: EngineOnService | null = null;
let front: FaultProxy | null = null;
let teammate: { harness: EngineHarness; repo: TestRepo } | null = null;

afterEach(async () => {
  await teammate?.harness.close();
  teammate?.repo.cleanup();
  teammate = null;
  await setup?.close();
  setup = null;
  await front?.close();
  front = null;
});

/** The versions the service's history has of a file: a deletion is a version without a hash. */
function versionsOf(svc: EngineOnService['svc'], flowPath: string, path: string) {
  return svc.read<{ hash: string | null }>(
    'SELECT hash FROM file_versions WHERE flow_path = ? AND path = ? ORDER BY version',
    flowPath,
    path,
  );
}

describe('a file grown over 1 MiB on disk', () => {
  it('stays on the service as it was, is no held deletion, and says why it is not sent, after a restart and in a rebuilt state too', async () => {
    setup = await engineOnService({ 'flows/a/main.yaml': 'a: 1\n', 'flows/a/data.yaml': 'small: 1\n' });
    const { repo, svc } = setup;
    const first = setup.engine();
    await first.engine.start();
    const stored = () => serviceTree(svc.read, 'acme', 'app');
    expect(stored()['flows/a/data.yaml']).toBe('small: 1\n');

    repo.write('flows/a/data.yaml', TWO_MIB);
    // An edit of the flow's other file after it: the round that sends it is the one that sent the deletion.
    repo.write('flows/a/main.yaml', 'a: 2\n');
    await eventually(() => expect(stored()['flows/a/main.yaml']).toBe('a: 2\n'));
    await first.engine.syncAndCheck();

    const expectKept = (harness: typeof first) => {
      expect(stored()).toEqual({ 'flows/a/main.yaml': 'a: 2\n', 'flows/a/data.yaml': 'small: 1\n' });
      expect(versionsOf(svc, 'flows/a', 'data.yaml').every((version) => version.hash !== null)).toBe(true);
      const { engine, state } = harness;
      expect(state.deletionCount(engine.repoId)).toBe(0);
      expect(state.goneAcknowledged(engine.repoId)).toEqual([]);
      expect(engine.status()).toMatchObject({ heldDeletions: 0, counts: { pending: 0, warnings: 1 } });
      expect(state.warnings(engine.repoId)).toEqual([
        { flowPath: 'flows/a', path: 'data.yaml', warning: 'oversized' },
      ]);
      expect(describeFileWarning('oversized')).toBe('over 1 MiB: add it to .gitignore');
    };
    expectKept(first);

    // A restart rescans the disk and checks the service: the file is still not a deletion.
    await first.close();
    const second = setup.engine();
    await second.engine.start();
    await second.engine.syncAndCheck();
    expectKept(second);
    expect(second.state.conflicts(second.engine.repoId)).toEqual([]);

    // A state rebuilt from nothing (damaged, moved aside) learns the service first: the file is not a deletion
    // there either, nor a file "not in this checkout".
    await second.close();
    const rebuilt = setup.engine({ statePath: join(repo.dir, 'rebuilt-state.db') });
    await rebuilt.engine.start();
    await rebuilt.engine.syncAndCheck();
    expect(stored()).toEqual({ 'flows/a/main.yaml': 'a: 2\n', 'flows/a/data.yaml': 'small: 1\n' });
    expect(versionsOf(svc, 'flows/a', 'data.yaml').every((version) => version.hash !== null)).toBe(true);
    expect(rebuilt.engine.status()).toMatchObject({ heldDeletions: 0, counts: { pending: 0, warnings: 1 } });
    expect(await rebuilt.engine.service.filesNotInCheckout()).toEqual([]);

    // Made small again, it is sent on the version the service kept once its user says so: a rebuilt state has no
    // proof that version is its own (its writer id alone is none: issue 45, a copy of this checkout carries it too).
    repo.write('flows/a/data.yaml', 'small: 2\n');
    await eventually(() =>
      expect(rebuilt.state.conflicts(rebuilt.engine.repoId).map((c) => c.path)).toEqual(['data.yaml']),
    );
    expect(stored()['flows/a/data.yaml']).toBe('small: 1\n');
    await rebuilt.engine.service.resolve(null, 'mine');
    await eventually(() => expect(stored()['flows/a/data.yaml']).toBe('small: 2\n'));
    await eventually(() =>
      expect(rebuilt.engine.status()).toMatchObject({ counts: { pending: 0, warnings: 0 } }),
    );
  });

  it('on a service of the spec alone (full listings), the flow is not listed without it', async () => {
    setup = await engineOnService({ 'flows/a/main.yaml': 'a: 1\n', 'flows/a/data.yaml': 'small: 1\n' });
    const { repo, svc } = setup;
    front = await startSpecOnlyFront(svc.url);
    const { engine, state } = setup.engine({ url: front.url });
    await engine.start();
    const stored = () => serviceTree(svc.read, 'acme', 'app');
    expect(stored()['flows/a/data.yaml']).toBe('small: 1\n');

    repo.write('flows/a/data.yaml', TWO_MIB);
    repo.write('flows/a/main.yaml', 'a: 2\n');
    await eventually(() => expect(stored()['flows/a/main.yaml']).toBe('a: 2\n'));
    await engine.sync();
    expect(stored()['flows/a/data.yaml']).toBe('small: 1\n');
    expect(state.deletionCount(engine.repoId)).toBe(0);
    expect(engine.status()).toMatchObject({ heldDeletions: 0, counts: { pending: 0, warnings: 1 } });
  });

  it('edited on the service meanwhile, it is a conflict of a change here, not of a deletion', async () => {
    const files = { 'flows/a/main.yaml': 'a: 1\n', 'flows/a/data.yaml': 'small: 1\n' };
    setup = await engineOnService(files);
    const { repo, svc } = setup;
    const { engine, state } = setup.engine();
    await engine.initialSync();
    teammate = { repo: makeRepo(files), harness: null! };
    teammate.harness = testEngine({
      root: teammate.repo.root,
      statePath: join(teammate.repo.dir, 'state.db'),
      url: svc.url,
      userToken: svc.tokens.user,
      writer: 'bob@laptop:~/app',
    });
    await teammate.harness.engine.initialSync();

    repo.write('flows/a/data.yaml', TWO_MIB);
    await engine.syncOnce();
    teammate.repo.write('flows/a/data.yaml', 'small: bob\n');
    await teammate.harness.engine.syncOnce();
    expect(await engine.round.check()).toBe(1);

    // `flowsync conflicts` and the window say "you changed it" for a sent hash that is not null (null: "you deleted
    // it"), and not the base ("unchanged here").
    expect(state.conflicts(engine.repoId)).toMatchObject([
      { flowPath: 'flows/a', path: 'data.yaml', sentHash: '', serviceHash: sha256('small: bob\n') },
    ]);
    expect(serviceTree(svc.read, 'acme', 'app')['flows/a/data.yaml']).toBe('small: bob\n');
  });

  it('150 files grown over 1 MiB are not held deletions', async () => {
    const files: Record<string, string> = {};
    for (let n = 0; n < 160; n++) files[`flows/f${n % 8}/s${n}.yaml`] = `s: ${n}\n`;
    setup = await engineOnService(files);
    const { repo, svc } = setup;
    const { engine, state } = setup.engine();
    await engine.start();
    const stored = () => serviceTree(svc.read, 'acme', 'app');
    expect(Object.keys(stored())).toHaveLength(160);

    // Sparse: 2 MiB each as the agent sees them, no 300 MB written on a shared disk.
    for (let n = 0; n < 150; n++)
      truncateSync(join(repo.root, `flows/f${n % 8}/s${n}.yaml`), 2 * 1024 * 1024);
    await eventually(() => expect(state.warnings(engine.repoId)).toHaveLength(150));
    await engine.sync();

    expect(engine.status()).toMatchObject({ heldDeletions: 0, counts: { pending: 0, warnings: 150 } });
    expect(state.deletionCount(engine.repoId)).toBe(0);
    expect(stored()).toEqual(files);
    expect(svc.read<{ n: number }>('SELECT count(*) AS n FROM file_versions WHERE hash IS NULL')[0]!.n).toBe(
      0,
    );
  });
});
