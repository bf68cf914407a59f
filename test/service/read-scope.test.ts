import { createCipheriv, createHash, randomBytes } from 'node:crypto';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createClient } from '../../src/client/index.ts';
import { ALL_FUNCTIONS, type FunctionPath } from '../../src/protocol/index.ts';
import { memberToken } from '../support/members.ts';
import { callFunction, startTestService, type TestService } from '../support/service.ts';

/**
 * The scope table (issue 48): a read-only member may call every function of scope `read`, each changes no row of
 * any table (on a service holding every kind of row), and every function of another scope refuses her with a 403
 * that names her role. A function added to the table with scope `read` must be given args here, or this fails.
 */
let svc: TestService;
let reader: string;
let versionNumber = 0;
const SECRET = 'lin_api_readscope_0123456789abcdef';
const apiKey = { secret: SECRET, type: 'personal-api-key' };
const REPO = { repo_owner: 'acme', repo_name: 'app' };
const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');

beforeAll(async () => {
  svc = await startTestService();
  const admin = createClient({ baseUrl: svc.url, auth: { adminToken: svc.sharedTokens.admin } });
  const user = createClient({
    baseUrl: svc.url,
    auth: { userToken: svc.sharedTokens.user },
    writer: 'ada@laptop',
  });
  try {
    await admin.apiKey.addActivity({
      api_key_tid: 'tid-ada',
      ts: 1_764_000_000_123,
      payload: {
        type: 'key-created',
        hash: sha256(SECRET),
        name: 'laptop',
        prefix_4: SECRET.slice(0, 4),
        suffix_4: SECRET.slice(-4),
        user_id: 'u-ada',
      },
    });
    for (const [type, data] of [
      ['Issue', { id: 'i-1', identifier: 'ENG-1', title: 'Fix the login', teamId: 'team-eng' }],
      ['Project', { id: 'p-1', name: 'Launch' }],
      ['User', { id: 'u-ada', name: 'Ada', email: 'ada@example.com' }],
    ] as const)
      await admin.webhooks.storeWebhook({
        payload: { action: 'create', type, data },
        team: 'team-eng',
        status: 'received',
      });
    const files = (content: string, base?: string) => [
      {
        flow_path: 'flows/ci',
        files: [{ path: 'a.yml', content, hash: sha256(content), ...(base && { base_hash: base }) }],
      },
    ];
    await user.flowDef.syncBatch({ ...REPO, flows: files('a: 1\n') });
    await user.flowDef.syncBatch({ ...REPO, flows: files('a: 2\n', sha256('a: 1\n')) });
    await user.repoConfig.update({ owner: 'acme', name: 'app', editor: 'code' });
    const history = await user.flowDef.fileVersions({ ...REPO, flow_path: 'flows/ci', path: 'a.yml' });
    versionNumber = history.versions.at(-1)!.version;
  } finally {
    await admin.close();
    await user.close();
  }
  reader = await memberToken(svc.url, `Admin ${svc.sharedTokens.admin}`, 'rita', 'read');
});
afterAll(async () => {
  await svc.close();
});

function decryptArgs() {
  const key = randomBytes(32);
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', key, iv);
  const ciphertext = Buffer.concat([cipher.update('hello'), cipher.final()]);
  return {
    ciphertext: ciphertext.toString('base64'),
    iv: iv.toString('base64'),
    key: key.toString('base64'),
    tag: cipher.getAuthTag().toString('base64'),
  };
}

/** Valid args for every function of scope `read`. */
const READ_ARGS: Partial<Record<FunctionPath, () => Record<string, unknown>>> = {
  'svc/tracker/action/issues/search/run': () => ({ api_key: apiKey, query: 'login' }),
  'svc/tracker/action/projects/list/run': () => ({ api_key: apiKey }),
  'svc/tracker/action/issues/batch/run': () => ({ api_key: apiKey, identifiers: ['ENG-1', 'ENG-9'] }),
  'svc/tracker/action/projects/get/run': () => ({ api_key: apiKey, id: 'p-1' }),
  'crypto/decrypt_aes_gcm/run': decryptArgs,
  'svc/tracker/action/users/viewer/run': () => ({ api_key: apiKey }),
  'svc/flow_def/public/capabilities': () => ({}),
  'svc/flow_def/public/list_flows': () => REPO,
  'svc/flow_def/public/list_files': () => ({ ...REPO, with_content: true }),
  'svc/flow_def/public/file_versions': () => ({ ...REPO, flow_path: 'flows/ci', path: 'a.yml' }),
  'svc/flow_def/public/version_content': () => ({ version: versionNumber }),
  'svc/flow_def/public/list_deleted': () => REPO,
  'svc/members/public/whoami': () => ({}),
  // Held 300 ms with nothing written meanwhile: a live team's feed reads only.
  'svc/flow_def/public/changes': () => ({
    repos: [{ repo_owner: REPO.repo_owner, repo_name: REPO.repo_name }],
    after: null,
    wait_ms: 300,
  }),
};

/**
 * Every row of every table, as text: the service's whole state. On Postgres with a client of its own, not psql: a
 * synchronous psql of a few seconds on the loaded machine held the test's event loop past the service's keep-alive,
 * and the next call reused a connection the service had closed (ECONNRESET).
 */
async function everyRow(): Promise<string> {
  if (process.env.FLOWSYNC_TEST_DB === 'postgres') {
    const client = new pg.Client({ connectionString: svc.dbPath });
    await client.connect();
    try {
      const tables = await client.query<{ name: string }>(
        "SELECT table_name AS name FROM information_schema.tables WHERE table_schema = 'public' ORDER BY table_name",
      );
      const rows = await client.query<{ tbl: string; rowtext: string }>(
        tables.rows
          .map(({ name }) => `SELECT '${name}'::text AS tbl, row_to_json(x)::text AS rowtext FROM ${name} x`)
          .join(' UNION ALL '),
      );
      return JSON.stringify(rows.rows.map(({ tbl, rowtext }) => `${tbl} ${rowtext}`).sort());
    } finally {
      await client.end();
    }
  }
  const tables = svc.read<{ name: string }>(
    "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name",
  );
  return JSON.stringify(
    tables.map(({ name }) => [
      name,
      svc
        .read(`SELECT * FROM ${name}`)
        .map((row) => JSON.stringify(row))
        .sort(),
    ]),
  );
}

describe('the read scope', () => {
  const reads = ALL_FUNCTIONS.filter((fn) => fn.scope === 'read');

  it('gives args here to every function of scope read', () => {
    expect(reads.map((fn) => fn.path).filter((path) => !READ_ARGS[path])).toEqual([]);
  });

  it.each(reads.map((fn) => fn.path))('%s: a read-only member calls it, and no row changes', async (path) => {
    const before = await everyRow();
    const reply = await callFunction(svc.url, `Bearer ${reader}`, path, READ_ARGS[path]!());
    expect(reply.statusCode, JSON.stringify(reply.body)).toBe(200);
    expect(await everyRow()).toBe(before);
  });

  it.each(ALL_FUNCTIONS.filter((fn) => fn.scope === 'write' || fn.scope === 'operator').map((fn) => fn.path))(
    '%s: refused to a read-only member, naming her role, before anything is read',
    async (path) => {
      const before = await everyRow();
      const reply = await callFunction(svc.url, `Bearer ${reader}`, path, {});
      expect(reply.statusCode).toBe(403);
      expect(reply.body.errorData).toMatchObject({ reason: 'forbidden', role: 'read', member: 'rita' });
      expect(reply.body.errorMessage).toMatch(/^rita is /);
      expect(await everyRow()).toBe(before);
    },
  );
});
