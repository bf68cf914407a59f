import { createHash } from 'node:crypto';
import { afterEach, describe, expect, it } from 'vitest';
import { createClient, type RemoteClient } from '../../src/client/index.ts';
import { startTestService, type TestService } from '../support/service.ts';

/**
 * A live team's feed (issue 47): a call to `changes` held by the service is answered when a teammate writes a flow
 * of the caller's repositories, with the flows as they are now; from a cursor, every write after it is answered
 * once. Real service over HTTP on a SQLite file, and on Postgres in the Postgres pass; across two service
 * processes on one Postgres: changes-across-processes.test.ts.
 */
const sha = (text: string) => createHash('sha256').update(text).digest('hex');
const file = (path: string, content: string, base?: string | null) => ({
  path,
  content,
  hash: sha(content),
  ...(base !== undefined && { base_hash: base }),
});
const APP = { repo_owner: 'acme', repo_name: 'app' };
const OTHER = { repo_owner: 'acme', repo_name: 'other' };

let service: TestService;
const opened: RemoteClient[] = [];

afterEach(async () => {
  await Promise.all(opened.splice(0).map((client) => client.close()));
  await service?.close();
});

function client(url: string, writer: string): RemoteClient {
  const made = createClient({ baseUrl: url, auth: { userToken: service.tokens.user }, writer });
  opened.push(made);
  return made;
}

async function firstCursor(reader: RemoteClient, repos = [APP]): Promise<string> {
  const answer = await reader.flowDef.changes({ repos, after: null });
  expect(answer).toMatchObject({ gap: true, changes: [], more: false });
  return answer.cursor;
}

describe('the change feed of a live team', () => {
  it('answers a held call with the flow a teammate wrote, its hash as list_flows says it, and who wrote it', async () => {
    service = await startTestService();
    const ada = client(service.url, 'ada@laptop:~/app');
    const bob = client(service.url, 'bob@desk:~/app');
    await ada.flowDef.syncBatch({
      ...APP,
      flows: [{ flow_path: 'flows/ci', files: [file('a.yml', 'a\n', null)] }],
    });
    const cursor = await firstCursor(ada);

    // Held for up to 20 s; Bob's write answers it (a call that ran out its time answers with no change).
    const held = ada.flowDef.changes({ repos: [APP], after: cursor, wait_ms: 20_000 }, { timeoutMs: 30_000 });
    await expect.poll(() => service.service.heldCalls()).toBe(1);
    await bob.flowDef.syncBatch({
      ...APP,
      flows: [{ flow_path: 'flows/ci', files: [file('a.yml', 'b\n', sha('a\n'))] }],
    });
    const answer = await held;
    const { flows } = await ada.flowDef.listFlows(APP);
    expect(answer).toMatchObject({
      gap: false,
      more: false,
      changes: [{ ...APP, flow_path: 'flows/ci', hash: flows[0]!.hash, written_by: 'bob@desk:~/app' }],
    });

    // From its cursor: nothing more, at once.
    expect(await ada.flowDef.changes({ repos: [APP], after: answer.cursor })).toMatchObject({
      changes: [],
      gap: false,
    });
  });

  it("names a flow whose last file was deleted with no hash, and never another repository's flows", async () => {
    service = await startTestService();
    const ada = client(service.url, 'ada');
    await ada.flowDef.syncBatch({
      ...APP,
      flows: [{ flow_path: 'flows/ci', files: [file('a.yml', 'a\n', null)] }],
    });
    const cursor = await firstCursor(ada);
    await ada.flowDef.syncBatch({
      ...OTHER,
      flows: [{ flow_path: 'flows/elsewhere', files: [file('x.yml', 'x\n', null)] }],
    });
    await ada.flowDef.syncBatch({
      ...APP,
      flows: [{ flow_path: 'flows/ci', files: [], deletes: [{ path: 'a.yml', base_hash: sha('a\n') }] }],
    });
    const answer = await ada.flowDef.changes({ repos: [APP], after: cursor });
    expect(answer.changes).toEqual([{ ...APP, flow_path: 'flows/ci', hash: null, written_by: 'ada' }]);
    // The other repository's write is behind the cursor too: not named again for either.
    expect(await ada.flowDef.changes({ repos: [APP, OTHER], after: answer.cursor })).toMatchObject({
      changes: [],
    });
  });

  it('does not count a conflict copy as a change (the flow is as it was)', async () => {
    service = await startTestService();
    const ada = client(service.url, 'ada');
    await ada.flowDef.syncBatch({
      ...APP,
      flows: [{ flow_path: 'flows/ci', files: [file('a.yml', 'a\n', null)] }],
    });
    const cursor = await firstCursor(ada);
    await ada.flowDef.keepCopy({
      ...APP,
      flow_path: 'flows/ci',
      path: 'a.yml',
      content: 'mine\n',
      hash: sha('mine\n'),
    });
    expect(await ada.flowDef.changes({ repos: [APP], after: cursor, wait_ms: 300 })).toMatchObject({
      changes: [],
    });
  });

  it('pages a burst: a thousand flows at most per answer, the rest after its cursor', async () => {
    service = await startTestService();
    const ada = client(service.url, 'ada');
    const cursor = await firstCursor(ada);
    const flows = Array.from({ length: 1_005 }, (_, i) => ({
      flow_path: `flows/f${String(i).padStart(4, '0')}`,
      files: [file('a.yml', `${i}\n`, null)],
    }));
    await ada.flowDef.syncBatch({ ...APP, flows: flows.slice(0, 1_000) });
    await ada.flowDef.syncBatch({ ...APP, flows: flows.slice(1_000) });
    const page = await ada.flowDef.changes({ repos: [APP], after: cursor });
    expect(page).toMatchObject({ more: true });
    expect(page.changes).toHaveLength(1_000);
    const rest = await ada.flowDef.changes({ repos: [APP], after: page.cursor });
    expect(rest).toMatchObject({ more: false });
    expect(new Set([...page.changes, ...rest.changes].map((change) => change.flow_path)).size).toBe(1_005);
  });

  it('says there is a gap for a cursor it cannot cover (not its own, or of another history)', async () => {
    service = await startTestService();
    const ada = client(service.url, 'ada');
    await ada.flowDef.syncBatch({
      ...APP,
      flows: [{ flow_path: 'flows/ci', files: [file('a.yml', 'a\n', null)] }],
    });
    for (const after of ['not-a-cursor', `999999.${Date.now()}`])
      expect(await ada.flowDef.changes({ repos: [APP], after })).toMatchObject({ gap: true, changes: [] });
  });

  it('answers its held calls at once when it closes, so a restart does not wait for them', async () => {
    service = await startTestService();
    const ada = client(service.url, 'ada');
    const cursor = await firstCursor(ada);
    const held = ada.flowDef.changes({ repos: [APP], after: cursor, wait_ms: 25_000 }, { timeoutMs: 30_000 });
    await expect.poll(() => service.service.heldCalls()).toBe(1);
    const closing = Date.now();
    await service.stop();
    expect(await held).toMatchObject({ changes: [], gap: false });
    // Not a timing claim about speed: the call's own wait (25 s) did not have to run out.
    expect(Date.now() - closing).toBeLessThan(20_000);
  });
});
