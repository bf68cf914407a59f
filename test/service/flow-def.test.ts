import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { flowAggregateHashForTest } from '../support/aggregate-hash.ts';
import { fileEntry, sha256 } from '../support/flows.ts';
import { startTestService, type TestService } from '../support/service.ts';

const SYNC_BATCH = 'svc/flow_def/action/sync_batch/run';
const SYNC_INTERNAL = 'svc/flow_def/private/sync_internal';
const UPDATE_FILE = 'svc/flow_def/public/update_file';

let svc: TestService;
beforeEach(async () => {
  svc = await startTestService();
});
afterEach(async () => {
  await svc.close();
});

interface StoredFile {
  flow_path: string;
  path: string;
  hash: string;
  content: string;
  id: string;
}

function storedFiles(): StoredFile[] {
  return svc.read<StoredFile>(
    `SELECT fl.flow_path, f.path, f.hash, f.content, f.id FROM flow_files f JOIN flows fl ON fl.id = f.flow_id
     ORDER BY fl.flow_path, f.path`,
  );
}

function syncBatch(flows: unknown[], extra: Record<string, unknown> = {}, as: 'user' | 'admin' = 'user') {
  return svc.call(SYNC_BATCH, { repo_owner: 'acme', repo_name: 'app', flows, ...extra }, as);
}

describe('sync_batch', () => {
  it('creates, updates and leaves untouched, and stores exactly what was sent', async () => {
    const first = await syncBatch([
      { flow_path: 'flows/a', files: [fileEntry('main.yaml', 'a: 1'), fileEntry('lib/x.py', 'print(1)')] },
      { flow_path: 'flows/b', files: [fileEntry('main.yaml', 'b: 1')] },
    ]);
    expect(first.statusCode).toBe(200);
    expect(first.body.status).toBe('success');
    expect(first.body.value).toMatchObject({
      files_created: 3,
      files_updated: 0,
      files_deleted: 0,
      flows_synced: 2,
      skipped: false,
    });

    const second = await syncBatch([
      { flow_path: 'flows/a', files: [fileEntry('main.yaml', 'a: 2'), fileEntry('lib/x.py', 'print(1)')] },
      { flow_path: 'flows/b', files: [fileEntry('main.yaml', 'b: 1'), fileEntry('extra.txt', 'new')] },
    ]);
    expect(second.body.value).toMatchObject({
      files_created: 1,
      files_updated: 1,
      files_deleted: 0,
      flows_synced: 2,
      skipped: false,
    });

    expect(storedFiles().map(({ flow_path, path, content }) => [flow_path, path, content])).toEqual([
      ['flows/a', 'lib/x.py', 'print(1)'],
      ['flows/a', 'main.yaml', 'a: 2'],
      ['flows/b', 'extra.txt', 'new'],
      ['flows/b', 'main.yaml', 'b: 1'],
    ]);
  });

  it('reports skipped when nothing changed at all', async () => {
    const flows = [{ flow_path: 'flows/a', files: [fileEntry('main.yaml', 'a: 1')] }];
    await syncBatch(flows);
    const again = await syncBatch(flows);
    expect(again.body.value).toMatchObject({
      files_created: 0,
      files_updated: 0,
      files_deleted: 0,
      skipped: true,
    });
  });

  it('returns the ids of written files, which update_file then accepts', async () => {
    const reply = await syncBatch([{ flow_path: 'flows/a', files: [fileEntry('main.yaml', 'a: 1')] }]);
    const value = reply.body.value as {
      files: { flow_path: string; path: string; id: string }[];
      repo_id: string;
    };
    expect(value.files).toHaveLength(1);
    expect(value.files[0]).toMatchObject({ flow_path: 'flows/a', path: 'main.yaml', hash: sha256('a: 1') });
    expect(value.files[0]!.id).toBe(storedFiles()[0]!.id);
    expect(svc.read('SELECT id FROM repos WHERE owner = ? AND name = ?', 'acme', 'app')).toEqual([
      { id: value.repo_id },
    ]);
  });

  it('deletes files missing from an entry only with delete_missing, and empties a flow sent with no files', async () => {
    await syncBatch([
      { flow_path: 'flows/a', files: [fileEntry('1.txt', '1'), fileEntry('2.txt', '2')] },
      { flow_path: 'flows/b', files: [fileEntry('1.txt', 'b')] },
    ]);
    const kept = await syncBatch([{ flow_path: 'flows/a', files: [fileEntry('1.txt', '1')] }]);
    expect(kept.body.value).toMatchObject({ files_deleted: 0, skipped: true });
    expect(storedFiles()).toHaveLength(3);

    const pruned = await syncBatch(
      [
        { flow_path: 'flows/a', files: [fileEntry('1.txt', '1')] },
        { flow_path: 'flows/b', files: [] },
      ],
      { delete_missing: true },
    );
    expect(pruned.body.value).toMatchObject({
      files_deleted: 2,
      files_created: 0,
      flows_synced: 2,
      skipped: false,
    });
    expect(storedFiles().map((f) => `${f.flow_path}/${f.path}`)).toEqual(['flows/a/1.txt']);
  });

  it('keeps each flow an aggregate hash of its files, whatever their order', async () => {
    const files = [fileEntry('b.txt', 'B'), fileEntry('a.txt', 'A')];
    await syncBatch([{ flow_path: 'flows/a', files }]);
    const [flow] = svc.read<{ hash: string }>('SELECT hash FROM flows');
    expect(flow!.hash).toBe(flowAggregateHashForTest(files));
    expect(flow!.hash).toBe(flowAggregateHashForTest([...files].reverse()));
  });

  it.each([
    ['../escape.txt', 'has a .. segment'],
    ['a/../../b', 'has a .. segment'],
    ['/etc/passwd', 'is absolute'],
    ['C:/x', 'is absolute'],
    ['a\\b', 'contains a backslash'],
    ['a//b', 'has an empty segment'],
    ['a/\u0000b', 'contains a NUL byte'],
    ['', 'is empty'],
  ])('refuses the file path %j (422) and writes nothing of the batch', async (path, reason) => {
    const reply = await syncBatch([
      { flow_path: 'flows/good', files: [fileEntry('ok.txt', 'fine')] },
      { flow_path: 'flows/bad', files: [fileEntry('fine.txt', 'x'), fileEntry(path, 'evil')] },
    ]);
    expect(reply.statusCode).toBe(422);
    expect(reply.body.status).toBe('error');
    expect(reply.body.errorMessage).toContain(reason);
    expect(reply.body.errorData).toMatchObject({ reason: 'refused', path: ['flows', 1, 'files', 1, 'path'] });
    expect(svc.read('SELECT * FROM flow_files')).toEqual([]);
    expect(svc.read('SELECT * FROM flows')).toEqual([]);
    expect(svc.read('SELECT * FROM repos')).toEqual([]);
  });

  it('refuses an unsafe flow_path', async () => {
    const reply = await syncBatch([{ flow_path: '../flows', files: [fileEntry('a.txt', 'a')] }]);
    expect(reply.statusCode).toBe(422);
    expect(reply.body.errorData).toMatchObject({ path: ['flows', 0, 'flow_path'] });
    expect(svc.read('SELECT * FROM flows')).toEqual([]);
  });

  it('refuses a hash that does not match its content, and writes nothing', async () => {
    const reply = await syncBatch([
      {
        flow_path: 'flows/a',
        files: [fileEntry('ok.txt', 'ok'), { path: 'lie.txt', content: 'x', hash: sha256('y') }],
      },
    ]);
    expect(reply.statusCode).toBe(422);
    expect(reply.body.errorMessage).toContain('not the SHA-256');
    expect(reply.body.errorData).toMatchObject({ path: ['flows', 0, 'files', 1, 'hash'] });
    expect(storedFiles()).toEqual([]);
  });

  it('refuses a path sent twice in one flow and a flow sent twice in one batch', async () => {
    const twiceInFlow = await syncBatch([
      { flow_path: 'flows/a', files: [fileEntry('x', '1'), fileEntry('x', '2')] },
    ]);
    expect(twiceInFlow.statusCode).toBe(422);
    const twiceInBatch = await syncBatch([
      { flow_path: 'flows/a', files: [fileEntry('x', '1')] },
      { flow_path: 'flows/a', files: [fileEntry('y', '2')] },
    ]);
    expect(twiceInBatch.statusCode).toBe(422);
    expect(storedFiles()).toEqual([]);
  });

  it('stores multi-byte UTF-8 content with the hash of its bytes', async () => {
    const content = 'naïve — ✓ 日本語 🚀';
    const reply = await syncBatch([{ flow_path: 'flows/ü', files: [fileEntry('ß.md', content)] }]);
    expect(reply.statusCode).toBe(200);
    const [row] = svc.read<{ content: string; size: number; hash: string }>(
      'SELECT content, size, hash FROM flow_files',
    );
    expect(row).toEqual({ content, size: Buffer.byteLength(content), hash: sha256(content) });
  });
});

describe('sync_internal', () => {
  async function repoId(): Promise<string> {
    const reply = await syncBatch([{ flow_path: 'flows/a', files: [fileEntry('main.yaml', 'v1')] }]);
    return (reply.body.value as { repo_id: string }).repo_id;
  }

  it('upserts one flow by repo id and returns its id', async () => {
    const repo = await repoId();
    const reply = await svc.call(SYNC_INTERNAL, {
      repo_id: repo,
      flow_path: 'flows/a',
      files: [fileEntry('main.yaml', 'v2'), fileEntry('new.txt', 'n')],
    });
    expect(reply.statusCode).toBe(200);
    const [flow] = svc.read<{ id: string; hash: string }>(
      "SELECT id, hash FROM flows WHERE flow_path = 'flows/a'",
    );
    expect(reply.body.value).toMatchObject({
      files_created: 1,
      files_updated: 1,
      files_deleted: 0,
      flow_def_id: flow!.id,
    });
    expect(flow!.hash).toBe(
      flowAggregateHashForTest([fileEntry('main.yaml', 'v2'), fileEntry('new.txt', 'n')]),
    );
  });

  it('with skip_hash_update keeps the flow hash while the files change', async () => {
    const repo = await repoId();
    const [before] = svc.read<{ hash: string }>('SELECT hash FROM flows');
    const reply = await svc.call(SYNC_INTERNAL, {
      repo_id: repo,
      flow_path: 'flows/a',
      files: [fileEntry('main.yaml', 'changed')],
      skip_hash_update: true,
    });
    expect(reply.body.value).toMatchObject({ files_updated: 1 });
    const [after] = svc.read<{ hash: string }>('SELECT hash FROM flows');
    expect(after!.hash).toBe(before!.hash);
    expect(storedFiles()[0]!.content).toBe('changed');
  });

  it('deletes missing files with delete_missing', async () => {
    const repo = await repoId();
    const reply = await svc.call(SYNC_INTERNAL, {
      repo_id: repo,
      flow_path: 'flows/a',
      files: [],
      delete_missing: true,
    });
    expect(reply.body.value).toMatchObject({ files_deleted: 1 });
    expect(storedFiles()).toEqual([]);
  });

  it('refuses an unknown repository id (422) and a user token (403)', async () => {
    const unknown = await svc.call(SYNC_INTERNAL, { repo_id: 'nope', flow_path: 'flows/a', files: [] });
    expect(unknown.statusCode).toBe(422);
    expect(unknown.body.errorMessage).toContain('No repository with id nope');
    const asUser = await svc.call(
      SYNC_INTERNAL,
      { repo_id: 'nope', flow_path: 'flows/a', files: [] },
      'user',
    );
    expect(asUser.statusCode).toBe(403);
  });
});

describe('update_file', () => {
  it('replaces the content by id, recomputing the file and flow hashes', async () => {
    const reply = await syncBatch([
      { flow_path: 'flows/a', files: [fileEntry('main.yaml', 'v1'), fileEntry('other.txt', 'o')] },
    ]);
    const id = (reply.body.value as { files: { id: string; path: string }[] }).files.find(
      (f) => f.path === 'main.yaml',
    )!.id;
    const [flowBefore] = svc.read<{ hash: string }>('SELECT hash FROM flows');

    const updated = await svc.call(UPDATE_FILE, { fileId: id, content: 'v2' }, 'user');
    expect(updated.statusCode).toBe(200);
    const expectedFlowHash = flowAggregateHashForTest([
      fileEntry('main.yaml', 'v2'),
      fileEntry('other.txt', 'o'),
    ]);
    expect(updated.body.value).toMatchObject({
      id,
      path: 'main.yaml',
      flow_path: 'flows/a',
      hash: sha256('v2'),
      size: 2,
      flow_hash: expectedFlowHash,
    });
    const [flowAfter] = svc.read<{ hash: string }>('SELECT hash FROM flows');
    expect(flowAfter!.hash).toBe(expectedFlowHash);
    expect(flowAfter!.hash).not.toBe(flowBefore!.hash);
    expect(storedFiles().find((f) => f.id === id)!.content).toBe('v2');
  });

  it('refuses an unknown file id (422)', async () => {
    const reply = await svc.call(UPDATE_FILE, { fileId: 'missing', content: 'x' });
    expect(reply.statusCode).toBe(422);
    expect(reply.body.errorMessage).toBe('No file with id missing.');
  });
});
