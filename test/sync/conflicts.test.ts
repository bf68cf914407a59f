import { readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { engineOnService, testEngine, type EngineHarness, type EngineOnService } from '../support/engine.ts';
import { startFaultProxy } from '../support/fault-proxy.ts';
import { makeRepo, serviceTree, type TestRepo } from '../support/repo.ts';
import { readDatabase } from '../support/service.ts';

/**
 * Two checkouts of acme/app (A and B) on one service, each with its own engine and state: the service takes
 * bases, so a write on a stale copy is a conflict that waits for its user, never an overwrite, and nothing is
 * deleted that this checkout did not see.
 */
const FILES = {
  'flows/ci/a.yml': 'a: 1\n',
  'flows/ci/b.yml': 'b: 1\n',
  'flows/deploy/d.yml': 'd: 1\n',
};

let setup: EngineOnService;
let other: TestRepo;
const extra: EngineHarness[] = [];

afterEach(async () => {
  for (const harness of extra.splice(0)) await harness.close();
  await setup?.close();
  other?.cleanup();
});

async function twoCheckouts() {
  setup = await engineOnService(FILES);
  other = makeRepo(FILES);
  const a = setup.engine();
  const b = testEngine({
    root: other.root,
    statePath: join(other.dir, 'state.db'),
    url: setup.svc.url,
    userToken: setup.svc.tokens.user,
    writer: 'bob@laptop:~/app',
  });
  extra.push(b);
  await a.engine.initialSync();
  await b.engine.initialSync();
  const service = () => serviceTree(readDatabase(setup.svc.dbPath), 'acme', 'app');
  return { a, b, A: setup.repo, B: other, service };
}

describe('two checkouts on one service that takes bases', () => {
  it('keeps both edits of different files of one flow, and a checkout that saw neither deletes nothing', async () => {
    const { a, b, A, B, service } = await twoCheckouts();
    A.write('flows/ci/a.yml', 'a: A\n');
    A.write('flows/ci/new-from-a.yml', 'new: A\n');
    await a.engine.syncOnce();
    // B never saw A's edit nor A's new file: B's own edit of b.yml and a deletion of d.yml go, A's work stays.
    B.write('flows/ci/b.yml', 'b: B\n');
    await b.engine.syncOnce();
    expect(service()).toEqual({
      'flows/ci/a.yml': 'a: A\n',
      'flows/ci/b.yml': 'b: B\n',
      'flows/ci/new-from-a.yml': 'new: A\n',
      'flows/deploy/d.yml': 'd: 1\n',
    });
    // B's check of the service finds A's edit of a file B has not changed: B is behind (never a conflict: issue
    // 41), shown as newer on the service, and takes it.
    expect(b.state.conflicts(b.engine.repoId)).toEqual([]);
    expect(b.state.behind(b.engine.repoId)).toEqual([
      expect.objectContaining({ flowPath: 'flows/ci', path: 'a.yml', lost: false }),
    ]);
    expect(b.engine.status().message).toContain('1 file newer on the service, by ');
    expect(await b.engine.service.takeNewer()).toEqual({
      taken: [{ flowPath: 'flows/ci', path: 'a.yml', change: 'replaced' }],
      notWritten: [],
      asked: [],
    });
    expect(readFileSync(join(B.root, 'flows/ci/a.yml'), 'utf8')).toBe('a: A\n');
    expect(b.engine.status().counts).toMatchObject({ conflicts: 0, pending: 0 });
  });

  it("is behind no longer once the teammate's edit is reverted on the service (issue 41)", async () => {
    const { a, b, A } = await twoCheckouts();
    A.write('flows/ci/a.yml', 'a: A\n');
    await a.engine.syncOnce();
    await b.engine.round.check();
    expect(b.state.behind(b.engine.repoId).map((c) => c.path)).toEqual(['a.yml']);
    // A puts it back as it was: the service holds B's base again, and B is in sync, by a quick check too.
    A.write('flows/ci/a.yml', 'a: 1\n');
    await a.engine.syncOnce();
    await b.engine.round.check({ quick: true });
    expect(b.state.behind(b.engine.repoId)).toEqual([]);
    expect(b.state.conflicts(b.engine.repoId)).toEqual([]);
    expect(b.engine.status().counts).toMatchObject({ behind: 0, conflicts: 0, pending: 0 });
  });

  it("makes an edit of a stale copy a conflict, sends the flow's other files, and settles it either way", async () => {
    const { a, b, A, B, service } = await twoCheckouts();
    B.write('flows/ci/b.yml', 'b: B\n');
    await b.engine.syncOnce();

    // A edits the same file on its stale copy, and another file of the same flow.
    A.write('flows/ci/b.yml', 'b: A\n');
    A.write('flows/ci/a.yml', 'a: A\n');
    const first = await a.engine.syncOnce();
    expect(first.conflicts).toEqual([{ flowPath: 'flows/ci', path: 'b.yml', writtenBy: 'bob@laptop:~/app' }]);
    // The other file of the flow went in the round after (the service left the conflicting flow whole).
    await a.engine.syncOnce();
    expect(service()['flows/ci/a.yml']).toBe('a: A\n');
    expect(service()['flows/ci/b.yml']).toBe('b: B\n');
    const status = a.engine.status();
    expect(status.counts).toMatchObject({ conflicts: 1, pending: 0 });
    expect(status.message).toContain('1 file is in conflict');
    // Not resent as it is: a round sends nothing.
    expect((await a.engine.syncOnce()).requests).toBe(0);
    const [conflict] = a.state.conflicts(a.engine.repoId);
    expect(conflict).toMatchObject({ flowPath: 'flows/ci', path: 'b.yml', sentHash: expect.any(String) });

    // Take the service's: B's content on A's disk, nothing sent, nothing pending; A's edit kept in the history.
    expect(await a.engine.service.resolve(null, 'theirs')).toEqual({
      resolved: [{ flowPath: 'flows/ci', path: 'b.yml' }],
      notWritten: [],
      kept: [{ flowPath: 'flows/ci', path: 'b.yml', version: expect.any(Number) }],
    });
    expect(readFileSync(join(A.root, 'flows/ci/b.yml'), 'utf8')).toBe('b: B\n');
    expect((await a.engine.syncOnce()).requests).toBe(0);
    expect(a.engine.status().counts).toMatchObject({ conflicts: 0, pending: 0 });

    // Again, and keep mine this time: A's content goes on top of B's version, which stays in the history.
    B.write('flows/ci/b.yml', 'b: B2\n');
    await b.engine.syncOnce();
    A.write('flows/ci/b.yml', 'b: A2\n');
    expect((await a.engine.syncOnce()).conflicts).toHaveLength(1);
    await a.engine.service.resolve([{ flowPath: 'flows/ci', path: 'b.yml' }], 'mine');
    await a.engine.syncOnce();
    expect(service()['flows/ci/b.yml']).toBe('b: A2\n');
    const versions = readDatabase(setup.svc.dbPath)<{ hash: string | null }>(
      `SELECT hash FROM file_versions WHERE path = 'b.yml' AND conflict_copy IS NULL ORDER BY version`,
    );
    // b: 1 (A's first sync; B's first sync sent the same content: no version), b: B, b: B2, b: A2 (and A's first
    // edit, b: A, as its conflict copy). Nothing lost.
    expect(versions).toHaveLength(4);
  });

  it('makes a deletion of a file changed on the service a conflict, not a deletion', async () => {
    const { a, b, A, B, service } = await twoCheckouts();
    B.write('flows/deploy/d.yml', 'd: B\n');
    await b.engine.syncOnce();
    A.remove('flows/deploy/d.yml');
    const report = await a.engine.syncOnce();
    expect(report.conflicts).toHaveLength(1);
    expect(service()['flows/deploy/d.yml']).toBe('d: B\n');
    // Settled on disk: A puts back what the service has (here by taking it), and the conflict is gone.
    await a.engine.service.resolve(null, 'theirs');
    expect(readFileSync(join(A.root, 'flows/deploy/d.yml'), 'utf8')).toBe('d: B\n');
    expect(a.engine.status().counts).toMatchObject({ conflicts: 0, pending: 0 });
  });

  it('settles a conflict by itself when its user makes the file what the service has', async () => {
    const { a, b, A, B } = await twoCheckouts();
    B.write('flows/ci/a.yml', 'a: B\n');
    await b.engine.syncOnce();
    A.write('flows/ci/a.yml', 'a: A\n');
    expect((await a.engine.syncOnce()).conflicts).toHaveLength(1);
    A.write('flows/ci/a.yml', 'a: B\n'); // merged by hand to the service's version
    expect((await a.engine.syncOnce()).requests).toBe(0);
    expect(a.engine.status().counts).toMatchObject({ conflicts: 0, pending: 0 });
  });

  it('a rebuilt state asks before its edit goes over the version it wrote; an old clone of a colleague is a conflict, not a revert', async () => {
    setup = await engineOnService(FILES);
    other = makeRepo(FILES); // the colleague's clone, taken now: it will be old
    const first = setup.engine({ writer: 'ada@laptop:~/app' });
    await first.engine.syncOnce();
    setup.repo.write('flows/ci/a.yml', 'a: ada 2\n');
    await first.engine.syncOnce();
    await first.close();
    // Ada's state is lost (damaged, rebuilt) and she edits meanwhile. The service's version carries her id, but a
    // copy of her checkout carries it too (issue 45: the team model's "a rebuilt state takes the copy's edit for its
    // own and reverts it"): her edit is a conflict of two versions under her id, sent once she says so.
    for (const suffix of ['', '-wal', '-shm'])
      rmSync(join(setup.repo.dir, `state.db${suffix}`), { force: true });
    setup.repo.write('flows/ci/a.yml', 'a: ada 3\n');
    const rebuilt = setup.engine({ writer: 'ada@laptop:~/app' });
    const report = await rebuilt.engine.syncOnce();
    expect(report.conflicts).toEqual([
      { flowPath: 'flows/ci', path: 'a.yml', writtenBy: 'ada@laptop:~/app' },
    ]);
    const service = () => serviceTree(readDatabase(setup.svc.dbPath), 'acme', 'app');
    expect(service()['flows/ci/a.yml']).toBe('a: ada 2\n');
    await rebuilt.engine.service.resolve(null, 'mine');
    await rebuilt.engine.syncOnce();
    expect(service()['flows/ci/a.yml']).toBe('a: ada 3\n');
    // A file she did not edit meanwhile is in sync at once: the very bytes on disk are her own version.
    expect(rebuilt.engine.status().counts).toMatchObject({ conflicts: 0, pending: 0 });

    // A colleague's first sync from the old clone: a.yml differs from what the service has, written by Ada.
    const colleague = testEngine({
      root: other.root,
      statePath: join(other.dir, 'state.db'),
      url: setup.svc.url,
      userToken: setup.svc.tokens.user,
      writer: 'bob@desk:~/app',
    });
    extra.push(colleague);
    const theirs = await colleague.engine.syncOnce();
    expect(theirs.conflicts).toEqual([
      { flowPath: 'flows/ci', path: 'a.yml', writtenBy: 'ada@laptop:~/app' },
    ]);
    expect(service()['flows/ci/a.yml']).toBe('a: ada 3\n');
    expect(colleague.engine.status().counts.conflicts).toBe(1);
  });

  it('an old write delivered late (a proxy replaying it) is refused as a conflict, never an overwrite', async () => {
    setup = await engineOnService(FILES);
    const { svc, repo } = setup;
    const proxy = await startFaultProxy(svc.url);
    const writes: { path: string; body: string }[] = [];
    proxy.fault = (path, _index, body) => {
      if (/sync_batch|update_file/.test(path)) writes.push({ path, body });
      return null;
    };
    const harness = setup.engine({ url: proxy.url, writer: 'ada@laptop:~/app' });
    await harness.engine.syncOnce();
    repo.write('flows/ci/a.yml', 'a: 2\n');
    await harness.engine.syncOnce();
    const late = writes.at(-1)!; // the write of a: 2, on the base a: 1
    repo.write('flows/ci/a.yml', 'a: 3\n');
    await harness.engine.syncOnce();
    await proxy.close();

    const replayed = await svc.raw(late.path, {
      body: late.body,
      headers: { 'content-type': 'application/json', authorization: `Bearer ${svc.tokens.user}` },
    });
    // Refused whole (update_file: 422) or listed as a conflict (sync_batch): either way nothing was written.
    const refused =
      replayed.statusCode === 422 ||
      ((replayed.body.value as { conflicts?: unknown[] } | undefined)?.conflicts?.length ?? 0) > 0;
    expect(refused, JSON.stringify(replayed.body)).toBe(true);
    expect(serviceTree(readDatabase(svc.dbPath), 'acme', 'app')['flows/ci/a.yml']).toBe('a: 3\n');
  });

  it('keeps yours beside the file when the service keeps no conflict copies, and never syncs that copy', async () => {
    setup = await engineOnService(FILES);
    other = makeRepo(FILES);
    // A service with bases but without keep_copy (an older flowsync service): its capabilities say nothing of it.
    const proxy = await startFaultProxy(setup.svc.url);
    proxy.rewrite = (path, answer) =>
      path.endsWith('/capabilities') ? answer.replace(/,"conflict_copies":true/, '') : answer;
    const a = setup.engine();
    const b = testEngine({
      root: other.root,
      statePath: join(other.dir, 'state.db'),
      url: proxy.url,
      userToken: setup.svc.tokens.user,
      writer: 'bob@laptop:~/app',
    });
    extra.push(b);
    try {
      await a.engine.initialSync();
      await b.engine.initialSync();
      setup.repo.write('flows/ci/a.yml', 'a: A\n');
      await a.engine.syncOnce();
      other.write('flows/ci/a.yml', 'a: B, not sent\n');
      await b.engine.syncOnce();
      expect(b.state.conflicts(b.engine.repoId)).toHaveLength(1);

      const settled = await b.engine.service.resolve(null, 'theirs');
      expect(settled.kept).toEqual([
        {
          flowPath: 'flows/ci',
          path: 'a.yml',
          beside: expect.stringMatching(/^flows\/ci\/a\.conflict-\d{8}T\d{6}Z\.yml$/),
        },
      ]);
      expect(readFileSync(join(other.root, 'flows/ci/a.yml'), 'utf8')).toBe('a: A\n');
      expect(readFileSync(join(other.root, settled.kept[0]!.beside!), 'utf8')).toBe('a: B, not sent\n');
      // No version of the service holds it, and the next round does not send it: it is this checkout's.
      await b.engine.syncOnce();
      const read = readDatabase(setup.svc.dbPath);
      expect(read('SELECT 1 FROM file_versions WHERE conflict_copy = 1')).toEqual([]);
      expect(Object.keys(serviceTree(read, 'acme', 'app')).sort()).toEqual(Object.keys(FILES).sort());
      expect(b.engine.status().counts).toMatchObject({ conflicts: 0, pending: 0 });
    } finally {
      await proxy.close();
    }
  });
});
