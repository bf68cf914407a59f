import { existsSync, readFileSync, renameSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { engineOnService, testEngine, type EngineHarness, type EngineOnService } from '../support/engine.ts';
import { makeRepo, serviceTree, type TestRepo } from '../support/repo.ts';
import { readDatabase } from '../support/service.ts';

/**
 * Issue 24: files on the service that a fresh checkout (B) never had are settled only as its user says, and only
 * those its user saw: a deletion goes on the version listed (a teammate's edit since is a conflict, not deleted;
 * a file added since is not touched), and a file written to disk never replaces one that is there. A and B are
 * two engines with their own states on one real service that takes bases.
 */
let setup: EngineOnService;
let other: TestRepo;
const extra: EngineHarness[] = [];

afterEach(async () => {
  for (const harness of extra.splice(0)) await harness.close();
  await setup?.close();
  other?.cleanup();
});

async function aFreshCheckout(deletionGuard?: { files: number; share: number }) {
  setup = await engineOnService({
    'flows/ci/build.yml': 'build: 1\n',
    'flows/ci/lint.yml': 'lint: 1\n',
    'flows/deploy/prod.yml': 'prod: 1\n',
    'flows/deploy/stage.yml': 'stage: 1\n',
  });
  other = makeRepo({ 'flows/ci/build.yml': 'build: 1\n' });
  const a = setup.engine();
  const b = testEngine({
    root: other.root,
    statePath: join(other.dir, 'state.db'),
    url: setup.svc.url,
    userToken: setup.svc.tokens.user,
    writer: 'ci@runner:~/app',
    ...(deletionGuard && { deletionGuard }),
  });
  extra.push(b);
  await a.engine.initialSync();
  await b.engine.initialSync();
  const service = () => serviceTree(readDatabase(setup.svc.dbPath), 'acme', 'app');
  return { a, b, A: setup.repo, B: other, service };
}

const names = (files: { flowPath: string; path: string }[]) =>
  files.map((file) => `${file.flowPath}/${file.path}`).sort();

describe('files on the service not in this checkout', () => {
  it('are counted in the status, and listed', async () => {
    const { b } = await aFreshCheckout();
    expect(b.engine.status().message).toContain(
      '3 files on the service are not in this checkout (kept there, not deleted)',
    );
    expect(names(await b.engine.service.filesNotInCheckout())).toEqual([
      'flows/ci/lint.yml',
      'flows/deploy/prod.yml',
      'flows/deploy/stage.yml',
    ]);
  });

  it('deleted: only those seen, each on the version seen; an edit since is a conflict, a new file stays', async () => {
    const { a, b, A, service } = await aFreshCheckout();
    const seen = await b.engine.service.filesNotInCheckout();
    // After B's user saw the list: A edits one of them and adds a file.
    A.write('flows/deploy/prod.yml', 'prod: 2\n');
    A.write('flows/deploy/canary.yml', 'canary: 1\n');
    await a.engine.syncOnce();

    const deleted = await b.engine.service.deleteNotInCheckout(
      seen.map(({ flowPath, path, hash }) => ({ flowPath, path, hash })),
    );
    expect(deleted).toBe(2);
    expect(service()).toEqual({
      'flows/ci/build.yml': 'build: 1\n',
      'flows/deploy/canary.yml': 'canary: 1\n',
      'flows/deploy/prod.yml': 'prod: 2\n',
    });
    expect(names(b.state.conflicts(b.engine.repoId))).toEqual(['flows/deploy/prod.yml']);
    expect(b.engine.status().counts).toMatchObject({ conflicts: 1 });
  });

  it('more than the deletion guard lets through: deleted only on its user confirming the list', async () => {
    const { b, service } = await aFreshCheckout({ files: 2, share: 1 });
    const before = service();
    const seen = (await b.engine.service.filesNotInCheckout()).map(({ flowPath, path, hash }) => ({
      flowPath,
      path,
      hash,
    }));
    expect(seen).toHaveLength(3);
    await expect(b.engine.service.deleteNotInCheckout(seen)).rejects.toThrow(
      '3 files to delete on the service is more than this repository deletes without asking: nothing was deleted',
    );
    expect(service()).toEqual(before);
    expect(await b.engine.service.deleteNotInCheckout(seen, true)).toBe(3);
    expect(service()).toEqual({ 'flows/ci/build.yml': 'build: 1\n' });
  });

  it('under a flow root that is not there (a drive not mounted): none is offered, none deleted', async () => {
    const { b, B, service } = await aFreshCheckout();
    const before = service();
    const listed = (await b.engine.service.filesNotInCheckout()).map(({ flowPath, path, hash }) => ({
      flowPath,
      path,
      hash,
    }));
    renameSync(join(B.root, 'flows'), join(B.dir, 'flows-away'));
    expect(await b.engine.service.filesNotInCheckout()).toEqual([]);
    expect(await b.engine.service.deleteNotInCheckout(listed, true)).toBe(0);
    expect(await b.engine.service.restoreNotInCheckout()).toEqual({ restored: 0, skipped: [] });
    expect(existsSync(join(B.root, 'flows'))).toBe(false);
    expect(service()).toEqual(before);

    // A checkout that never had its flow root (a sparse checkout, a fresh state): the same.
    const bare = makeRepo({ 'README.md': 'no flows here\n' });
    const c = testEngine({
      root: bare.root,
      statePath: join(bare.dir, 'state.db'),
      url: setup.svc.url,
      userToken: setup.svc.tokens.user,
      writer: 'ci@runner:~/bare',
    });
    extra.push(c);
    try {
      await c.engine.initialSync();
      expect(await c.engine.service.filesNotInCheckout()).toEqual([]);
      expect(await c.engine.service.deleteNotInCheckout(listed, true)).toBe(0);
      expect(await c.engine.service.restoreNotInCheckout()).toEqual({ restored: 0, skipped: [] });
      expect(existsSync(join(bare.root, 'flows'))).toBe(false);
      expect(service()).toEqual(before);
    } finally {
      await c.close();
      bare.cleanup();
    }
  });

  it('written to disk: from the service, never over what is on disk, and recorded as in sync', async () => {
    const { b, B, service } = await aFreshCheckout();
    const before = service();
    // A file of that name appears on disk before the engine has looked at it: it is B's, not replaced.
    B.write('flows/deploy/stage.yml', "B's own stage\n");
    const { restored, skipped } = await b.engine.service.restoreNotInCheckout();
    expect(restored).toBe(2);
    expect(skipped).toEqual([
      {
        flowPath: 'flows/deploy',
        path: 'stage.yml',
        reason: 'something of that name is on disk now: not overwritten',
      },
    ]);
    expect(readFileSync(join(B.root, 'flows/ci/lint.yml'), 'utf8')).toBe('lint: 1\n');
    expect(readFileSync(join(B.root, 'flows/deploy/prod.yml'), 'utf8')).toBe('prod: 1\n');
    expect(readFileSync(join(B.root, 'flows/deploy/stage.yml'), 'utf8')).toBe("B's own stage\n");
    expect(service()).toEqual(before);
    // What was written is in sync: a round sends nothing of it; B's own stage.yml goes by the usual rules (a
    // file new to B that the service has: a conflict, not an overwrite).
    const report = await b.engine.syncOnce();
    expect(report.files.map((file) => `${file.flowPath}/${file.path}`)).toEqual([]);
    expect(service()).toEqual(before);
    expect(names(b.state.conflicts(b.engine.repoId))).toEqual(['flows/deploy/stage.yml']);
  });
});
