import { createHash } from 'node:crypto';
import { afterEach, describe, expect, it } from 'vitest';
import { createClient, type RemoteClient } from '../../src/client/index.ts';
import { createService, type RunningService } from '../../src/service/index.ts';
import { startTestService, type TestService } from '../support/service.ts';

/**
 * The change feed across service processes (issue 47): with two services on one Postgres, a write through one
 * answers a call held by the other, through Postgres's own LISTEN/NOTIFY. Postgres's alone (vitest.config.ts
 * POSTGRES_ONLY): two services on one SQLite file are not how a team runs one.
 */
const sha = (text: string) => createHash('sha256').update(text).digest('hex');
const APP = { repo_owner: 'acme', repo_name: 'app' };

let service: TestService;
let second: RunningService | null = null;
const opened: RemoteClient[] = [];

afterEach(async () => {
  await Promise.all(opened.splice(0).map((client) => client.close()));
  await second?.close();
  second = null;
  await service?.close();
});

function client(url: string, writer: string): RemoteClient {
  const made = createClient({ baseUrl: url, auth: { userToken: service.tokens.user }, writer });
  opened.push(made);
  return made;
}

describe('the change feed across two service processes on one Postgres', () => {
  it('wakes a call held by one service process for a write through another (LISTEN/NOTIFY)', async () => {
    expect(process.env.FLOWSYNC_TEST_DB).toBe('postgres');
    service = await startTestService();
    second = await createService({ dbPath: service.dbPath, logLevel: 'silent' });
    const ada = client(service.url, 'ada');
    const bob = client(second.url, 'bob');
    const first = await ada.flowDef.changes({ repos: [APP], after: null });
    const held = ada.flowDef.changes(
      { repos: [APP], after: first.cursor, wait_ms: 20_000 },
      { timeoutMs: 30_000 },
    );
    await expect.poll(() => service.service.heldCalls()).toBe(1);
    await bob.flowDef.syncBatch({
      ...APP,
      flows: [
        {
          flow_path: 'flows/ci',
          files: [{ path: 'a.yml', content: 'b\n', hash: sha('b\n'), base_hash: null }],
        },
      ],
    });
    expect((await held).changes).toMatchObject([{ flow_path: 'flows/ci', written_by: 'bob' }]);
  });
});
