import { createHash } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createClient, RemoteError, type RemoteClient } from '../../src/client/index.ts';
import { eventually } from '../support/repo.ts';
import { testDatabase, type TestDatabase } from '../support/service.ts';
import { startServeProcess, type ServeProcess } from '../support/serve-process.ts';

/**
 * Issue 23: a team's service. Two developers' clients on one real `flowsync serve` (real HTTP, a real SQLite
 * file, or a Postgres database in the Postgres pass), each naming itself as the history shows it to the other.
 */
const sha = (text: string) => createHash('sha256').update(text).digest('hex');
const file = (path: string, content: string, base?: string | null) => ({
  path,
  content,
  hash: sha(content),
  ...(base !== undefined && { base_hash: base }),
});

let dir: string;
let serve: ServeProcess;
let ada: RemoteClient;
let bob: RemoteClient;
let spec: RemoteClient;
let read: TestDatabase['read'];
let database: TestDatabase | undefined;
const opened: RemoteClient[] = [];

async function start(extraArgs: string[] = [], env: NodeJS.ProcessEnv = {}) {
  dir = mkdtempSync(join(tmpdir(), 'flowsync-history-'));
  database = await testDatabase(dir);
  serve = await startServeProcess(database.location, join(dir, 'serve.log'), extraArgs, undefined, env);
  const auth = { userToken: serve.tokens.user };
  ada = createClient({ baseUrl: serve.url, auth, writer: 'ada@laptop:~/code/app' });
  bob = createClient({ baseUrl: serve.url, auth, writer: 'bob@desk:~/src/app' });
  // A client of the spec alone: no writer name, no bases, full listings with delete_missing.
  spec = createClient({ baseUrl: serve.url, auth });
  opened.push(ada, bob, spec);
  read = database.read;
}

afterEach(async () => {
  // Each test's own clients only: a test that opens none must not close the last test's again. The service stops
  // whatever the clients do, so that no `flowsync serve` outlives a failed test.
  try {
    await Promise.all(opened.splice(0).map((client) => client.close()));
  } finally {
    await serve?.stop();
    await database?.drop();
    database = undefined;
    rmSync(dir, { recursive: true, force: true });
  }
});

const batch = (client: RemoteClient, flows: Parameters<RemoteClient['flowDef']['syncBatch']>[0]['flows']) =>
  client.flowDef.syncBatch({ repo_owner: 'acme', repo_name: 'app', flows });

/** What the service holds of acme/app now, path → content. */
async function serviceFiles(): Promise<Record<string, string>> {
  const { files } = await ada.flowDef.listFiles({ repo_owner: 'acme', repo_name: 'app', with_content: true });
  return Object.fromEntries(files.map((f) => [`${f.flow_path}/${f.path}`, f.content!]));
}

describe('two developers on one service', () => {
  beforeEach(() => start());

  it('keeps a writer name outside ASCII as written, and no name that carries control characters', async () => {
    const named = (writer: string) => {
      const client = createClient({ baseUrl: serve.url, auth: { userToken: serve.tokens.user }, writer });
      opened.push(client);
      return client;
    };
    await batch(named('josé@portátil:~/código/app'), [
      { flow_path: 'flows/ci', files: [file('a.yml', 'a\n', null)] },
    ]);
    await batch(named('eve\u001b[31m@box'), [
      { flow_path: 'flows/ci', files: [file('a.yml', 'b\n', sha('a\n'))] },
    ]);
    const { versions } = await ada.flowDef.fileVersions({
      repo_owner: 'acme',
      repo_name: 'app',
      flow_path: 'flows/ci',
      path: 'a.yml',
    });
    expect(versions.map((v) => v.written_by)).toEqual([null, 'josé@portátil:~/código/app']);
  });

  it('says what it can do beyond the spec', async () => {
    expect(await ada.flowDef.capabilities({})).toMatchObject({
      bases: true,
      history: true,
      retention_days: 30,
      retention_bytes: 256 * 1024 * 1024,
    });
  });

  it("keeps a checkout's conflict copy as a version that is not current, and refuses one whose hash is wrong", async () => {
    await batch(ada, [{ flow_path: 'flows/ci', files: [file('build.yml', 'a1\n', null)] }]);
    const { version } = await bob.flowDef.keepCopy({
      repo_owner: 'acme',
      repo_name: 'app',
      flow_path: 'flows/ci',
      path: 'build.yml',
      content: 'bob, not sent\n',
      hash: sha('bob, not sent\n'),
    });
    const { versions } = await ada.flowDef.fileVersions({
      repo_owner: 'acme',
      repo_name: 'app',
      flow_path: 'flows/ci',
      path: 'build.yml',
    });
    expect(
      versions.map((v) => [v.version === version, v.hash, v.written_by, v.current, v.conflict_copy]),
    ).toEqual([
      [true, sha('bob, not sent\n'), 'bob@desk:~/src/app', false, true],
      [false, sha('a1\n'), 'ada@laptop:~/code/app', true, undefined],
    ]);
    expect((await ada.flowDef.versionContent({ version })).content).toBe('bob, not sent\n');
    await expect(
      bob.flowDef.keepCopy({
        repo_owner: 'acme',
        repo_name: 'app',
        flow_path: 'flows/ci',
        path: 'build.yml',
        content: 'x\n',
        hash: sha('y\n'),
      }),
    ).rejects.toThrow(/hash is not the SHA-256 of content/);
    expect((await ada.flowDef.capabilities({})).conflict_copies).toBe(true);
  });

  it('keeps both edits when they touch different files of one flow', async () => {
    await batch(ada, [
      { flow_path: 'flows/ci', files: [file('a.yml', 'a1\n', null), file('b.yml', 'b1\n', null)] },
    ]);
    // Bob, on the same base, edits b; Ada, on hers, edits a.
    const bobs = await batch(bob, [{ flow_path: 'flows/ci', files: [file('b.yml', 'b2\n', sha('b1\n'))] }]);
    const adas = await batch(ada, [{ flow_path: 'flows/ci', files: [file('a.yml', 'a2\n', sha('a1\n'))] }]);
    expect(bobs.conflicts).toEqual([]);
    expect(adas.conflicts).toEqual([]);
    expect(await serviceFiles()).toEqual({ 'flows/ci/a.yml': 'a2\n', 'flows/ci/b.yml': 'b2\n' });
  });

  it('refuses the later of two edits of one file as a conflict, and changes nothing else of that flow', async () => {
    await batch(ada, [
      { flow_path: 'flows/ci', files: [file('a.yml', 'a1\n', null), file('b.yml', 'b1\n', null)] },
      { flow_path: 'flows/deploy', files: [file('d.yml', 'd1\n', null)] },
    ]);
    await batch(ada, [{ flow_path: 'flows/ci', files: [file('a.yml', 'ada\n', sha('a1\n'))] }]);
    // Bob never saw Ada's edit: his a.yml is a conflict, so his b.yml edit in the same flow waits with it; his
    // other flow goes through.
    const answer = await batch(bob, [
      {
        flow_path: 'flows/ci',
        files: [file('a.yml', 'bob\n', sha('a1\n')), file('b.yml', 'b2\n', sha('b1\n'))],
      },
      { flow_path: 'flows/deploy', files: [file('d.yml', 'd2\n', sha('d1\n'))] },
    ]);
    expect(answer.conflicts).toEqual([
      {
        flow_path: 'flows/ci',
        path: 'a.yml',
        base_hash: sha('a1\n'),
        service_hash: sha('ada\n'),
        sent_hash: sha('bob\n'),
        written_by: 'ada@laptop:~/code/app',
        written_at: expect.any(String),
        // Who wrote it by the credential (issue 48): both write with the shared user token here.
        member: { id: 'shared', name: 'shared', shared: true, removed: false },
      },
    ]);
    expect(await serviceFiles()).toEqual({
      'flows/ci/a.yml': 'ada\n',
      'flows/ci/b.yml': 'b1\n',
      'flows/deploy/d.yml': 'd2\n',
    });
    // An edit whose content is already the service's is no conflict, whatever its base.
    const same = await batch(bob, [{ flow_path: 'flows/ci', files: [file('a.yml', 'ada\n', sha('a1\n'))] }]);
    expect(same.conflicts).toEqual([]);
    // A path believed new that the service has is a conflict too.
    const notNew = await batch(bob, [{ flow_path: 'flows/ci', files: [file('b.yml', 'mine\n', null)] }]);
    expect(notNew.conflicts).toMatchObject([{ path: 'b.yml', base_hash: null, service_hash: sha('b1\n') }]);
  });

  it('refuses a deletion on a stale base, and applies one on the current base', async () => {
    await batch(ada, [
      { flow_path: 'flows/ci', files: [file('a.yml', 'a1\n', null), file('b.yml', 'b1\n', null)] },
    ]);
    await batch(ada, [{ flow_path: 'flows/ci', files: [file('a.yml', 'a2\n', sha('a1\n'))] }]);
    const stale = await batch(bob, [
      { flow_path: 'flows/ci', files: [], deletes: [{ path: 'a.yml', base_hash: sha('a1\n') }] },
    ]);
    expect(stale.conflicts).toMatchObject([{ path: 'a.yml', service_hash: sha('a2\n'), sent_hash: null }]);
    expect(await serviceFiles()).toEqual({ 'flows/ci/a.yml': 'a2\n', 'flows/ci/b.yml': 'b1\n' });

    const current = await batch(bob, [
      { flow_path: 'flows/ci', files: [], deletes: [{ path: 'a.yml', base_hash: sha('a2\n') }] },
    ]);
    expect(current).toMatchObject({ conflicts: [], files_deleted: 1 });
    expect(await serviceFiles()).toEqual({ 'flows/ci/b.yml': 'b1\n' });
    // Explicit deletions never delete what they do not name.
    const versions = await ada.flowDef.fileVersions({
      repo_owner: 'acme',
      repo_name: 'app',
      flow_path: 'flows/ci',
      path: 'a.yml',
    });
    expect(versions.versions.map((v) => [v.hash, v.written_by, v.current])).toEqual([
      [null, 'bob@desk:~/src/app', true],
      [sha('a2\n'), 'ada@laptop:~/code/app', false],
      [sha('a1\n'), 'ada@laptop:~/code/app', false],
    ]);
  });

  it("applies a spec client's full listing, keeps what it deleted in history, and restores it", async () => {
    await batch(ada, [
      {
        flow_path: 'flows/ci',
        files: [file('a.yml', 'a1\n', null), file('new-from-ada.yml', 'ada\n', null)],
      },
    ]);
    // A client of the spec that never had Ada's new file: its full listing deletes it (the spec says so)...
    const listing = await spec.flowDef.syncBatch({
      repo_owner: 'acme',
      repo_name: 'app',
      flows: [{ flow_path: 'flows/ci', files: [file('a.yml', 'a1\n')] }],
      delete_missing: true,
    });
    expect(listing).toMatchObject({ files_deleted: 1, conflicts: [] });
    expect(await serviceFiles()).toEqual({ 'flows/ci/a.yml': 'a1\n' });
    // ...but it is in history, with who deleted it (a client that gave no name, with a user token).
    const { versions } = await ada.flowDef.fileVersions({
      repo_owner: 'acme',
      repo_name: 'app',
      flow_path: 'flows/ci',
      path: 'new-from-ada.yml',
    });
    expect(versions.map((v) => [v.hash, v.written_by, v.writer_kind])).toEqual([
      [null, null, 'user'],
      [sha('ada\n'), 'ada@laptop:~/code/app', 'user'],
    ]);
    const old = await ada.flowDef.versionContent({ version: versions[1]!.version });
    expect(old).toMatchObject({ content: 'ada\n', hash: sha('ada\n'), path: 'new-from-ada.yml' });
    const restored = await ada.flowDef.restoreVersion({ version: versions[1]!.version, base_hash: null });
    expect(restored).toMatchObject({ path: 'new-from-ada.yml', hash: sha('ada\n') });
    expect(await serviceFiles()).toEqual({ 'flows/ci/a.yml': 'a1\n', 'flows/ci/new-from-ada.yml': 'ada\n' });
    // A restore is a write like any other: on a stale base it is a conflict, refused with both sides.
    await batch(bob, [{ flow_path: 'flows/ci', files: [file('new-from-ada.yml', 'bob\n', sha('ada\n'))] }]);
    const stale = ada.flowDef.restoreVersion({ version: versions[1]!.version, base_hash: sha('ada\n') });
    await expect(stale).rejects.toBeInstanceOf(RemoteError);
    await expect(stale).rejects.toMatchObject({ statusCode: 422, errorData: { reason: 'conflict' } });
  });

  it('refuses update_file on a stale base with the conflict, and writes it on the current base', async () => {
    const first = await batch(ada, [{ flow_path: 'flows/ci', files: [file('a.yml', 'a1\n', null)] }]);
    const fileId = first.files![0]!.id;
    await ada.flowDef.updateFile({ fileId, content: 'a2\n', base_hash: sha('a1\n') });
    const late = bob.flowDef.updateFile({ fileId, content: 'late\n', base_hash: sha('a1\n') });
    await expect(late).rejects.toMatchObject({
      statusCode: 422,
      errorData: {
        reason: 'conflict',
        conflict: { service_hash: sha('a2\n'), written_by: 'ada@laptop:~/code/app' },
      },
    });
    expect(await serviceFiles()).toEqual({ 'flows/ci/a.yml': 'a2\n' });
    // Without a base, update_file is the spec's: last writer wins, and the version it replaced is kept.
    await spec.flowDef.updateFile({ fileId, content: 'spec\n' });
    const { versions } = await ada.flowDef.fileVersions({
      repo_owner: 'acme',
      repo_name: 'app',
      flow_path: 'flows/ci',
      path: 'a.yml',
    });
    expect(versions.map((v) => v.hash)).toEqual([sha('spec\n'), sha('a2\n'), sha('a1\n')]);
  });

  it("lists a repository's flows with their aggregate hashes and its files a page at a time", async () => {
    const files = Array.from({ length: 25 }, (_, i) =>
      file(`f${String(i).padStart(2, '0')}.yml`, `${i}\n`, null),
    );
    await batch(ada, [
      { flow_path: 'flows/a', files: files.slice(0, 10) },
      { flow_path: 'flows/b', files: files.slice(10) },
    ]);
    const { flows } = await bob.flowDef.listFlows({ repo_owner: 'acme', repo_name: 'app' });
    const stored = read<{ flow_path: string; hash: string }>(
      'SELECT flow_path, hash FROM flows ORDER BY flow_path',
    );
    expect(flows.map((f) => [f.flow_path, f.hash, f.files])).toEqual([
      ['flows/a', stored[0]!.hash, 10],
      ['flows/b', stored[1]!.hash, 15],
    ]);
    const seen: string[] = [];
    let after: string | undefined;
    let pages = 0;
    do {
      const page = await bob.flowDef.listFiles({
        repo_owner: 'acme',
        repo_name: 'app',
        first: 7,
        ...(after && { after }),
      });
      seen.push(...page.files.map((f) => `${f.flow_path}/${f.path}`));
      expect(
        page.files.every((f) => f.content === undefined && f.written_by === 'ada@laptop:~/code/app'),
      ).toBe(true);
      after = page.next ?? undefined;
      pages++;
    } while (after);
    expect(pages).toBe(4);
    expect(seen).toEqual([
      ...files.slice(0, 10).map((f) => `flows/a/${f.path}`),
      ...files.slice(10).map((f) => `flows/b/${f.path}`),
    ]);
    await expect(
      bob.flowDef.listFiles({ repo_owner: 'acme', repo_name: 'app', after: 'not-a-cursor' }),
    ).rejects.toMatchObject({
      statusCode: 422,
    });
    expect(await bob.flowDef.listFlows({ repo_owner: 'acme', repo_name: 'none' })).toEqual({ flows: [] });
  });

  it("pages a file's history, newest first, and the agent's reader gathers every page", async () => {
    let content = 'v0\n';
    await batch(ada, [{ flow_path: 'flows/ci', files: [file('a.yml', content, null)] }]);
    for (let i = 1; i < 7; i++) {
      const before = content;
      content = `v${i}\n`;
      await batch(ada, [{ flow_path: 'flows/ci', files: [file('a.yml', content, sha(before))] }]);
    }
    const args = { repo_owner: 'acme', repo_name: 'app', flow_path: 'flows/ci', path: 'a.yml' };
    const pages: number[][] = [];
    let after: string | undefined;
    do {
      const page = await ada.flowDef.fileVersions({ ...args, first: 3, ...(after ? { after } : {}) });
      pages.push(page.versions.map((v) => v.version));
      after = page.next ?? undefined;
    } while (after !== undefined);
    expect(pages.map((page) => page.length)).toEqual([3, 3, 1]);
    const all = pages.flat();
    expect(all).toEqual([...all].sort((a, b) => b - a));
    expect(new Set(all).size).toBe(7);
    await expect(ada.flowDef.fileVersions({ ...args, after: 'not-a-cursor' })).rejects.toThrow(/cursor/);
  });

  it('loses no update of 100 writers racing on one file: every acknowledged version is current or in history', async () => {
    await batch(ada, [{ flow_path: 'flows/hot', files: [file('counter.yml', 'v: start\n', null)] }]);
    const clients = Array.from({ length: 4 }, (_, i) =>
      createClient({ baseUrl: serve.url, auth: { userToken: serve.tokens.user }, writer: `writer-${i}` }),
    );
    const acknowledged: string[] = [];
    let conflicts = 0;
    try {
      await Promise.all(
        Array.from({ length: 100 }, async (_, writer) => {
          const client = clients[writer % clients.length]!;
          // Read, then write on what was read; on a conflict read again and retry, as an agent would.
          for (;;) {
            const { files } = await client.flowDef.listFiles({
              repo_owner: 'acme',
              repo_name: 'app',
              flow_path: 'flows/hot',
            });
            const content = `v: ${writer}\n`;
            const answer = await client.flowDef.syncBatch({
              repo_owner: 'acme',
              repo_name: 'app',
              flows: [{ flow_path: 'flows/hot', files: [file('counter.yml', content, files[0]!.hash)] }],
            });
            if (answer.conflicts!.length === 0) {
              acknowledged.push(sha(content));
              return;
            }
            conflicts++;
          }
        }),
      );
    } finally {
      await Promise.all(clients.map((client) => client.close()));
    }
    expect(acknowledged).toHaveLength(100);
    const { versions } = await ada.flowDef.fileVersions({
      repo_owner: 'acme',
      repo_name: 'app',
      flow_path: 'flows/hot',
      path: 'counter.yml',
    });
    const kept = new Set(versions.map((v) => v.hash));
    for (const hash of acknowledged) expect(kept.has(hash)).toBe(true);
    // 100 writes on top of the first version: each replaced exactly the one before it, none overwrote unseen.
    expect(versions).toHaveLength(101);
    expect(versions.filter((v) => v.current)).toHaveLength(1);
    // Racing on one file, some writes must have met a newer version (the number varies; that there were some
    // shows the race was real).
    expect(conflicts).toBeGreaterThan(0);
  }, 60_000);
});

describe('history retention', () => {
  it('prunes replaced versions past their age, never the current one', async () => {
    await start([], { FLOWSYNC_HISTORY_PRUNE_MS: '200' });
    await batch(ada, [
      { flow_path: 'flows/ci', files: [file('a.yml', 'a1\n', null), file('gone.yml', 'g\n', null)] },
    ]);
    await batch(ada, [
      {
        flow_path: 'flows/ci',
        files: [file('a.yml', 'a2\n', sha('a1\n'))],
        deletes: [{ path: 'gone.yml', base_hash: sha('g\n') }],
      },
    ]);
    expect(read('SELECT version FROM file_versions')).toHaveLength(4);
    // Forty days pass for what was replaced (the service keeps writing its file: a second connection sets the
    // times, as the clock would have).
    const old = new Date(Date.now() - 40 * 86_400_000).toISOString();
    database!.exec(
      `UPDATE file_versions SET replaced_at = '${old}' WHERE replaced_at IS NOT NULL;` +
        `UPDATE file_versions SET written_at = '${old}' WHERE hash IS NULL`,
    );
    await eventually(() =>
      expect(read<{ path: string; hash: string | null }>('SELECT path, hash FROM file_versions')).toEqual([
        { path: 'a.yml', hash: sha('a2\n') },
      ]),
    );
    expect(await serviceFiles()).toEqual({ 'flows/ci/a.yml': 'a2\n' });
  });

  it('prunes the oldest replaced versions of a repository past its size cap', async () => {
    await start(['--history-max-mb', '1'], { FLOWSYNC_HISTORY_PRUNE_MS: '200' });
    const big = (n: number) => `${String(n).repeat(1)}\n${'x'.repeat(400 * 1024)}`;
    await batch(ada, [{ flow_path: 'flows/big', files: [file('big.yml', big(0), null)] }]);
    for (let n = 1; n <= 4; n++)
      await batch(ada, [{ flow_path: 'flows/big', files: [file('big.yml', big(n), sha(big(n - 1)))] }]);
    // Four replaced versions of 400 KiB are 1.6 MiB: the oldest go until what is kept fits in 1 MiB.
    await eventually(() => {
      const kept = read<{ hash: string; current: number }>(
        'SELECT hash, replaced_at IS NULL AS current FROM file_versions ORDER BY version',
      );
      expect(kept.map((v) => v.hash)).toEqual([sha(big(2)), sha(big(3)), sha(big(4))]);
    });
  });

  it("keeps every file's last versions before it removes any file's older ones, and says when it cut", async () => {
    await start(['--history-max-mb', '1'], { FLOWSYNC_HISTORY_PRUNE_MS: '200' });
    const big = (n: number) => `${n}\n${'x'.repeat(300 * 1024)}`;
    // A quiet file, edited once long ago; then a busy one edited nine times, 300 KiB each.
    await batch(ada, [{ flow_path: 'flows/quiet', files: [file('q.yml', 'q1\n', null)] }]);
    await batch(bob, [{ flow_path: 'flows/quiet', files: [file('q.yml', 'q2\n', sha('q1\n'))] }]);
    const history = (flowPath: string, path: string) =>
      ada.flowDef.fileVersions({ repo_owner: 'acme', repo_name: 'app', flow_path: flowPath, path });
    // Nothing cut yet: the history says nothing of a cap.
    expect((await history('flows/quiet', 'q.yml')).capped ?? null).toBeNull();
    await batch(ada, [{ flow_path: 'flows/busy', files: [file('b.yml', big(0), null)] }]);
    for (let n = 1; n <= 9; n++)
      await batch(ada, [{ flow_path: 'flows/busy', files: [file('b.yml', big(n), sha(big(n - 1)))] }]);

    // 9 replaced versions of 300 KiB are 2.7 MiB: the busy file's beyond its last 5 go first, then its 5th newest;
    // the quiet file's older version (the oldest of the repository, which oldest-first removed first) stays.
    await eventually(async () => {
      const quiet = await history('flows/quiet', 'q.yml');
      expect(quiet.versions.map((v) => v.hash)).toEqual([sha('q2\n'), sha('q1\n')]);
      const busy = await history('flows/busy', 'b.yml');
      expect(busy.versions.map((v) => v.hash)).toEqual([9, 8, 7, 6].map((n) => sha(big(n))));
      // Said by the service for every file of the repository: when the cap cut, and the cap.
      expect(quiet.capped).toEqual({ at: expect.any(String) as string, cap_bytes: 1024 * 1024 });
    });
  });
});

describe('an operator purges a file from the history (issue 42)', () => {
  beforeEach(() => start());

  const purge = (client: RemoteClient, path: string, version?: number) =>
    client.flowDef.purgeHistory({
      repo_owner: 'acme',
      repo_name: 'app',
      flow_path: 'flows/ci',
      path,
      ...(version !== undefined && { version }),
    });
  const versionsOf = (path: string) =>
    ada.flowDef.fileVersions({ repo_owner: 'acme', repo_name: 'app', flow_path: 'flows/ci', path });

  it('removes a deleted secret’s versions and leaves a tombstone saying who purged and when; users may not', async () => {
    await batch(ada, [
      { flow_path: 'flows/ci', files: [file('a.yml', 'a1\n', null), file('.env', 'TOKEN=s3cret-1\n', null)] },
    ]);
    await batch(ada, [
      { flow_path: 'flows/ci', files: [file('.env', 'TOKEN=s3cret-2\n', sha('TOKEN=s3cret-1\n'))] },
    ]);
    await batch(ada, [
      { flow_path: 'flows/ci', files: [], deletes: [{ path: '.env', base_hash: sha('TOKEN=s3cret-2\n') }] },
    ]);
    expect((await versionsOf('.env')).versions).toHaveLength(3);

    // A user token may not purge (an operator's function): refused, nothing removed.
    await expect(purge(ada, '.env')).rejects.toMatchObject({ statusCode: 403 });
    expect((await versionsOf('.env')).versions).toHaveLength(3);

    const operator = createClient({
      baseUrl: serve.url,
      auth: { adminToken: serve.tokens.admin },
      writer: 'ops@host:~',
    });
    opened.push(operator);
    const before = Date.now();
    const { purge: tombstone } = await purge(operator, '.env');
    expect(tombstone).toMatchObject({ version: null, versions: 2, purged_by: 'ops@host:~' });
    expect(Date.parse(tombstone.purged_at)).toBeGreaterThanOrEqual(before - 1000);

    // The deletion (the current version) stays; no content of the secret is left anywhere in the database.
    const after = await versionsOf('.env');
    expect(after.versions.map((v) => [v.hash, v.current])).toEqual([[null, true]]);
    expect(after.purges).toEqual([tombstone]);
    expect(read('SELECT version FROM file_versions WHERE content LIKE ?', '%s3cret%')).toEqual([]);
    expect(read('SELECT id FROM flow_files WHERE content LIKE ?', '%s3cret%')).toEqual([]);
    // Another file's history is untouched; a second purge finds nothing and leaves no second tombstone.
    expect((await versionsOf('a.yml')).versions).toHaveLength(1);
    expect((await purge(operator, '.env')).purge.versions).toBe(0);
    expect((await versionsOf('.env')).purges).toHaveLength(1);
  });

  it('purges one version, and refuses the current one or another file’s', async () => {
    await batch(ada, [
      { flow_path: 'flows/ci', files: [file('a.yml', 'a1\n', null), file('b.yml', 'b\n', null)] },
    ]);
    await batch(ada, [{ flow_path: 'flows/ci', files: [file('a.yml', 'a2 secret\n', sha('a1\n'))] }]);
    await batch(ada, [{ flow_path: 'flows/ci', files: [file('a.yml', 'a3\n', sha('a2 secret\n'))] }]);
    const operator = createClient({ baseUrl: serve.url, auth: { adminToken: serve.tokens.admin } });
    opened.push(operator);
    const [current, secret, first] = (await versionsOf('a.yml')).versions;

    await expect(purge(operator, 'a.yml', current!.version)).rejects.toMatchObject({ statusCode: 422 });
    const other = (await versionsOf('b.yml')).versions[0]!.version;
    await expect(purge(operator, 'a.yml', other)).rejects.toMatchObject({ statusCode: 422 });

    const { purge: tombstone } = await purge(operator, 'a.yml', secret!.version);
    expect(tombstone).toMatchObject({ version: secret!.version, versions: 1, purged_by: null });
    expect((await versionsOf('a.yml')).versions.map((v) => v.version)).toEqual([
      current!.version,
      first!.version,
    ]);
    expect(await serviceFiles()).toEqual({ 'flows/ci/a.yml': 'a3\n', 'flows/ci/b.yml': 'b\n' });
  });
});
