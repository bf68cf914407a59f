import { mkdtempSync, readFileSync, rmSync, unlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createClient, type RemoteClient } from '../../src/client/index.ts';
import { sha256 } from '../support/flows.ts';
import {
  NO_KEYCHAIN,
  startAgentProcess,
  userEnv,
  writeAgentConfig,
  type AgentProcess,
} from '../support/agent-process.ts';
import { runFlowsync } from '../support/cli.ts';
import {
  execPostgres,
  readPostgres,
  startPostgresCluster,
  type PostgresCluster,
} from '../support/postgres.ts';
import { diskTree, eventually, makeRepo, serviceTree, type TestRepo } from '../support/repo.ts';
import { startRoundRobin, type RoundRobin } from '../support/round-robin.ts';
import { startServeProcess, type ServeProcess } from '../support/serve-process.ts';
import { callFunction } from '../support/service.ts';

/**
 * Issue 26: a team's service as two `flowsync serve` processes on one Postgres, behind a load balancer. Real
 * processes throughout: the cluster, both service processes, the balancer, and two developers' agents, each
 * with a HOME of its own.
 */

let cluster: PostgresCluster;
let dir: string;
const serves: ServeProcess[] = [];
const agents: AgentProcess[] = [];
const repos: TestRepo[] = [];
let balancer: RoundRobin | undefined;

beforeAll(async () => {
  cluster = await startPostgresCluster();
}, 60_000);
afterAll(() => cluster?.stop());
afterEach(async () => {
  for (const agent of agents.splice(0)) {
    agent.signal('SIGKILL');
    await agent.exited;
  }
  await balancer?.close();
  balancer = undefined;
  for (const serve of serves.splice(0)) await serve.stop();
  for (const repo of repos.splice(0)) repo.cleanup();
  rmSync(dir, { recursive: true, force: true });
});

/** A deterministic stream of numbers in [0, 1): the same edits every run, so a failure can be run again. */
function random(seed: number): () => number {
  let state = seed;
  return () => {
    state = (state * 1_103_515_245 + 12_345) % 2 ** 31;
    return state / 2 ** 31;
  };
}

// Several `flowsync serve` starts a test: 55 s for one on a loaded two-core machine, against vitest's 60 s.
/** Writes flows/ci/x.yml of acme/app, on `base` when given, as an agent sends it. */
const writeX = (client: RemoteClient, content: string, base?: string | null) =>
  client.flowDef.syncBatch({
    repo_owner: 'acme',
    repo_name: 'app',
    flows: [
      {
        flow_path: 'flows/ci',
        files: [
          { path: 'x.yml', content, hash: sha256(content), ...(base !== undefined && { base_hash: base }) },
        ],
      },
    ],
  });

/** Another process's transaction writing flows/ci: it holds the lock a writer of that flow takes until COMMIT. */
async function holdFlow(url: string, repoId: string): Promise<pg.Client> {
  const holder = new pg.Client({ connectionString: url });
  holder.on('error', () => undefined); // a test may restart the server under it
  await holder.connect();
  await holder.query('BEGIN');
  await holder.query('SELECT pg_advisory_xact_lock(hashtextextended($1, 0))', [`flow ${repoId} flows/ci`]);
  return holder;
}

/**
 * Two `flowsync serve` processes started at once on one new database: one of them migrates and issues the tokens
 * (printed by that one only), the other waits for it.
 */
async function twoProcesses() {
  dir = mkdtempSync(join(tmpdir(), 'flowsync-team-pg-'));
  const url = await cluster.createDatabase();
  const pair = await Promise.all([
    startServeProcess(url, join(dir, 'a.log')),
    startServeProcess(url, join(dir, 'b.log')),
  ]);
  serves.push(...pair);
  const tokens = pair.find((serve) => serve.tokens.admin !== '')!.tokens;
  return { url, a: pair[0]!, b: pair[1]!, both: pair, tokens };
}

describe('two service processes on one Postgres', { timeout: 180_000 }, () => {
  it('starts both on one database, migrated once, the password never printed; each reports its health', async () => {
    // Both at once: the advisory lock makes one migrate while the other waits, and only one issues tokens.
    const { url, both } = await twoProcesses();
    const password = new URL(url).password;
    const printed = both.map((serve) => serve.stdout());
    expect(printed.filter((out) => out.includes('admin token:'))).toHaveLength(1);
    for (const out of printed) {
      expect(out).toContain('database: postgres://flowsync:***@127.0.0.1');
      expect(out).not.toContain(password);
    }
    expect(readPostgres(url)('SELECT version FROM flowsync_schema')).toHaveLength(1);
    for (const serve of both) {
      const health = await fetch(`${serve.url}/health`);
      expect(health.status).toBe(200);
      expect(await health.json()).toEqual({ status: 'up', database: 'up' });
    }
  });

  it('takes tokens another process reissued: the old ones refused, the new ones taken', async () => {
    dir = mkdtempSync(join(tmpdir(), 'flowsync-team-pg-'));
    const url = await cluster.createDatabase();
    // Taken through the members' epoch, which every process polls (src/service/store/credentials.ts).
    const first = await startServeProcess(url, join(dir, 'a.log'));
    const other = await startServeProcess(url, join(dir, 'b.log'));
    serves.push(first, other);
    const capabilities = async (token: string) =>
      (await callFunction(other.url, `Bearer ${token}`, 'svc/flow_def/public/capabilities', {})).statusCode;
    expect(await capabilities(first.tokens.user)).toBe(200);
    await first.stop();
    const reissued = await startServeProcess(url, join(dir, 'a2.log'), ['--new-tokens']);
    serves.push(reissued);
    await eventually(async () => {
      expect(await capabilities(first.tokens.user)).toBe(401);
      expect(await capabilities(reissued.tokens.user)).toBe(200);
    }, 10_000);
  });

  it('says in one line what to do about a database it cannot have, never with the password, and 503s when it goes', async () => {
    dir = mkdtempSync(join(tmpdir(), 'flowsync-team-pg-'));
    const url = new URL(await cluster.createDatabase());
    const serveOn = async (db: string) => {
      const run = await runFlowsync(['serve', '--port', '0', '--db', db], { timeoutMs: 30_000 });
      expect(run.stderr).not.toContain(url.password);
      expect(run.stderr).not.toContain('incident');
      return { code: run.code, line: run.stderr.trim() };
    };
    const wrong = new URL(url);
    wrong.password = 'not-the-password';
    expect(await serveOn(wrong.toString())).toEqual({
      code: 2,
      line: expect.stringMatching(
        /^flowsync: Postgres at postgres:\/\/flowsync:\*\*\*@127\.0\.0\.1:\d+\/flowsync_\w+ refused the sign-in: check the user and password/,
      ),
    });
    const missing = new URL(url);
    missing.pathname = '/nothing_here';
    expect(await serveOn(missing.toString())).toEqual({
      code: 2,
      line: expect.stringContaining('The database "nothing_here" does not exist at'),
    });
    const nobody = new URL(url);
    nobody.port = '1';
    expect(await serveOn(nobody.toString())).toEqual({
      code: 3,
      line: expect.stringContaining('Cannot reach Postgres at postgres://flowsync:***@127.0.0.1:1/'),
    });

    // Up, then its database gone: the load balancer is told to send calls elsewhere.
    const serve = await startServeProcess(url.toString(), join(dir, 'serve.log'));
    serves.push(serve);
    expect((await fetch(`${serve.url}/health`)).status).toBe(200);
    await cluster.dropDatabase(url.toString());
    const down = await fetch(`${serve.url}/health`);
    expect(down.status).toBe(503);
    expect(await down.json()).toEqual({ status: 'down', database: 'down' });
    // A call meanwhile: 503 (send it again later, or to another process), not an incident of the service's own; the
    // process cannot confirm its list of members either, which fails closed the same way (issue 48).
    const call = await callFunction(
      serve.url,
      `Bearer ${serve.tokens.user}`,
      'svc/flow_def/public/list_flows',
      {
        repo_owner: 'acme',
        repo_name: 'app',
      },
    );
    expect(call.statusCode).toBe(503);
    expect(call.headers['retry-after']).toMatch(/^\d+$/);
    expect(call.body).toEqual({
      status: 'error',
      errorMessage: expect.stringContaining("The service's database cannot take this call now"),
      errorData: { reason: 'unavailable' },
    });
    // The log is written a moment after the answer.
    const logged = () => readFileSync(join(dir, 'serve.log'), 'utf8');
    await expect
      .poll(logged)
      .toMatch(/The database \\"flowsync_\w+\\" does not exist at postgres:\/\/flowsync:\*\*\*@/);
    expect(logged()).not.toContain('incident');
    expect(logged()).not.toContain(url.password);
  }, 120_000);

  it("lists flows and files in SQLite's order (bytes) on a database whose own order is a person's (ICU en-US)", async () => {
    dir = mkdtempSync(join(tmpdir(), 'flowsync-team-pg-'));
    const url = new URL(await cluster.createDatabase());
    const name = `${url.pathname.slice(1)}_icu`;
    execPostgres(
      url.toString(),
      `CREATE DATABASE ${name} TEMPLATE template0 LOCALE_PROVIDER icu ICU_LOCALE 'en-US' LOCALE 'C'`,
    );
    url.pathname = `/${name}`;
    expect(readPostgres(url.toString())("SELECT 'flows/ci' < 'flows/Zeta' AS human")).toEqual([
      { human: true },
    ]);
    const serve = await startServeProcess(url.toString(), join(dir, 'serve.log'));
    serves.push(serve);
    const client = createClient({ baseUrl: serve.url, auth: { userToken: serve.tokens.user } });
    const file = (path: string) => ({ path, content: `${path}\n`, hash: sha256(`${path}\n`) });
    await client.flowDef.syncBatch({
      repo_owner: 'acme',
      repo_name: 'app',
      flows: [
        { flow_path: 'flows/ci', files: [file('b.yml'), file('B.yml')] },
        { flow_path: 'flows/Zeta', files: [file('a.yml')] },
      ],
    });
    const listed = (await client.flowDef.listFlows({ repo_owner: 'acme', repo_name: 'app' })).flows;
    expect(listed.map((flow) => flow.flow_path)).toEqual(['flows/Zeta', 'flows/ci']);
    // One file a page: the cursor walks the same order, every file once.
    const paged: string[] = [];
    let after: string | undefined;
    do {
      const page = await client.flowDef.listFiles({ repo_owner: 'acme', repo_name: 'app', first: 1, after });
      paged.push(...page.files.map((f) => `${f.flow_path}/${f.path}`));
      after = page.next ?? undefined;
    } while (after);
    expect(paged).toEqual(['flows/Zeta/a.yml', 'flows/ci/B.yml', 'flows/ci/b.yml']);
    // Deleted files are listed as such, in the same order and pages (issue 41: a first round takes them as deleted).
    for (const flow_path of ['flows/ci', 'flows/Zeta'])
      await client.flowDef.syncBatch({
        repo_owner: 'acme',
        repo_name: 'app',
        flows: [{ flow_path, files: [] }],
        delete_missing: true,
      });
    const deleted: string[] = [];
    after = undefined;
    do {
      const page = await client.flowDef.listDeleted({
        repo_owner: 'acme',
        repo_name: 'app',
        first: 1,
        after,
      });
      deleted.push(...page.files.map((f) => `${f.flow_path}/${f.path}`));
      after = page.next ?? undefined;
    } while (after);
    expect(deleted).toEqual(['flows/Zeta/a.yml', 'flows/ci/B.yml', 'flows/ci/b.yml']);
    await client.close();
  });

  it('answers a webhook stored by one process, and each next page, from the other', async () => {
    const { a, b, tokens } = await twoProcesses();
    const call = async (serve: ServeProcess, path: string, args: Record<string, unknown>) => {
      const { body } = await callFunction(serve.url, `Admin ${tokens.admin}`, path, args);
      expect(body.status, body.errorMessage).toBe('success');
      return body.value as never;
    };
    const secret = 'lin_api_team_on_postgres_0042';
    await call(a, 'svc/swarm_api_key/private/add_activity', {
      api_key_tid: 'tid-1',
      ts: 1,
      payload: {
        type: 'key-created',
        hash: sha256(secret),
        name: 'k',
        prefix_4: 'lin_',
        suffix_4: '0042',
        user_id: 'user-1',
      },
    });
    for (let n = 1; n <= 5; n++) {
      await call(n % 2 ? a : b, 'wh/tracker/private/store_webhook', {
        team: 'team-eng',
        status: 'received',
        payload: {
          action: 'create',
          type: 'Issue',
          data: { id: `issue-${n}`, identifier: `ENG-${n}`, title: `Fix login ${n}`, teamId: 'team-eng' },
        },
      });
    }
    // Two a page, each page from the other process: the cursor is the database's, not a process's.
    const seen: string[] = [];
    let after: string | undefined;
    for (let page = 0; page < 5; page++) {
      const value = (await call(page % 2 ? a : b, 'svc/tracker/action/issues/search/run', {
        query: 'login',
        api_key: { secret, type: 'personal-api-key' },
        pagination: { first: 2, ...(after && { after }) },
      })) as {
        nodes: { identifier: string }[];
        pageInfo: { hasNextPage: boolean; endCursor: string | null };
      };
      seen.push(...value.nodes.map((node) => node.identifier));
      if (!value.pageInfo.hasNextPage) break;
      after = value.pageInfo.endCursor!;
    }
    expect(seen).toEqual(['ENG-5', 'ENG-4', 'ENG-3', 'ENG-2', 'ENG-1']);
  });

  it('answers a call that waits for a flow another process holds longer than the idle time-out', async () => {
    dir = mkdtempSync(join(tmpdir(), 'flowsync-team-pg-'));
    const url = await cluster.createDatabase();
    // Idle connections closed after 1 s: a call that waits 3 s for the flow's lock sends nothing meanwhile.
    const serve = await startServeProcess(url, join(dir, 'serve.log'), [], undefined, {
      FLOWSYNC_IDLE_TIMEOUT_MS: '1000',
    });
    serves.push(serve);
    const client = createClient({ baseUrl: serve.url, auth: { userToken: serve.tokens.user } });
    const write = (content: string) => writeX(client, content);
    const { repo_id: repoId } = await write('one\n');
    // Another process's transaction writing flows/ci, for 3 s.
    const holder = await holdFlow(url, repoId!);
    const released = new Promise((resolve) => setTimeout(resolve, 3000)).then(() => holder.query('COMMIT'));
    const reply = await write('two\n');
    await released;
    await holder.end();
    await client.close();
    expect(reply.files_updated).toBe(1);
    expect(serviceTree(readPostgres(url), 'acme', 'app')).toEqual({ 'flows/ci/x.yml': 'two\n' });
  });

  it('answers again by itself after its database restarted mid-call, without a restart of its own', async () => {
    dir = mkdtempSync(join(tmpdir(), 'flowsync-team-pg-'));
    const url = await cluster.createDatabase();
    const serve = await startServeProcess(url, join(dir, 'serve.log'));
    serves.push(serve);
    const client = createClient({ baseUrl: serve.url, auth: { userToken: serve.tokens.user } });
    const write = (content: string) => writeX(client, content);
    const { repo_id: repoId } = await write('one\n');
    // Calls waiting on the flow, in transactions, when the server goes down: their connections cannot roll back.
    await holdFlow(url, repoId!);
    const waiting = Array.from({ length: 6 }, (_, n) => write(`waiting ${n}\n`).catch(() => 'failed'));
    await new Promise((resolve) => setTimeout(resolve, 500));
    cluster.restart();
    await Promise.all(waiting);
    // Every later call is answered: no connection the restart broke is handed to one of them.
    for (let n = 0; n < 20; n++) expect((await write(`after ${n}\n`)).files_updated).toBe(1);
    await client.close();
    // The calls the restart cut were answered 503 (sent again by the client), not as incidents: a restart is no bug.
    const logged = () => readFileSync(join(dir, 'serve.log'), 'utf8');
    await expect.poll(logged).toContain('the database cannot take calls: answered 503');
    expect(logged()).not.toContain('incident');
  });

  it('keeps the base-hash rule across processes: racing writers on one file, each through another process, lose nothing', async () => {
    const { url, a, b, tokens } = await twoProcesses();
    const ada = createClient({ baseUrl: a.url, auth: { userToken: tokens.user }, writer: 'ada' });
    const bob = createClient({ baseUrl: b.url, auth: { userToken: tokens.user }, writer: 'bob' });
    const write = (client: RemoteClient, content: string, base: string | null) =>
      writeX(client, content, base);
    await write(ada, 'start\n', null);
    // Each round both writers read what the service holds, then both write on that base at once, each through its
    // own process: exactly one may win, the other's base is stale by then (whichever came second, on either process).
    let written = 0;
    let refused = 0;
    const read = async (client: RemoteClient) =>
      (await client.flowDef.listFiles({ repo_owner: 'acme', repo_name: 'app', with_content: true })).files[0]!
        .hash;
    for (let round = 0; round < 40; round++) {
      const bases = await Promise.all([read(ada), read(bob)]);
      const replies = await Promise.all([
        write(ada, `ada ${round}\n`, bases[0]),
        write(bob, `bob ${round}\n`, bases[1]),
      ]);
      for (const reply of replies) {
        if ((reply.conflicts ?? []).length > 0) refused++;
        else written++;
      }
    }
    await ada.close();
    await bob.close();
    // Every accepted write is one version, each replacing the one before: no write went over another unseen.
    const versions = readPostgres(url)<{ hash: string; current: boolean }>(
      'SELECT hash, replaced_at IS NULL AS current FROM file_versions ORDER BY version',
    );
    expect({ written, refused }).toEqual({ written: 40, refused: 40 });
    expect(versions).toHaveLength(1 + written);
    expect(versions.filter((version) => version.current)).toHaveLength(1);
  }, 60_000);

  it('1,000 edits from two agents spread over both processes, one killed with -9 mid-way and restarted: the service ends equal to the disks', async () => {
    dir = mkdtempSync(join(tmpdir(), 'flowsync-team-pg-'));
    const url = await cluster.createDatabase();
    const first = await startServeProcess(url, join(dir, 'a.log'));
    const second = await startServeProcess(url, join(dir, 'b.log'));
    serves.push(first, second);
    const backends = [first.url, second.url];
    balancer = await startRoundRobin(() => backends);
    const service = { url: balancer.url, tokens: first.tokens };

    const start: Record<string, string> = {};
    for (const who of ['alice', 'bob'])
      for (let i = 0; i < 20; i++) start[`flows/${who}/f${i}.yml`] = `${who} ${i}\n`;
    const checkouts = { alice: makeRepo(start), bob: makeRepo(start) };
    repos.push(checkouts.alice, checkouts.bob);
    for (const [who, repo] of Object.entries(checkouts)) {
      const env = { ...userEnv(join(repo.dir, who), service), ...NO_KEYCHAIN };
      // Both are acme/app (no git remote here); the random deletions are not a mass deletion to hold.
      writeAgentConfig(env, [{ path: repo.root, owner: 'acme', name: 'app', holdDeletions: false }]);
      const agent = startAgentProcess(['start', repo.root], env);
      agents.push(agent);
      await agent.waitFor(/Watching 1 repository/, 60_000);
    }

    // Each developer edits the files of their own flow: created, changed, deleted, at random.
    const next = random(26);
    const names = {
      alice: Object.keys(start).filter((p) => p.includes('/alice/')),
      bob: Object.keys(start).filter((p) => p.includes('/bob/')),
    };
    let created = 0;
    for (let edit = 0; edit < 1000; edit++) {
      const who = edit % 2 === 0 ? 'alice' : 'bob';
      const repo = checkouts[who];
      const own = names[who];
      const roll = next();
      if (roll < 0.3 || own.length < 5) {
        const path = `flows/${who}/new-${created++}.yml`;
        repo.write(path, `${who} made ${edit}\n`);
        own.push(path);
      } else {
        const index = Math.floor(next() * own.length);
        if (roll < 0.8) repo.write(own[index]!, `${who} edit ${edit}\n`);
        else {
          unlinkSync(join(repo.root, own[index]!));
          own.splice(index, 1);
        }
      }
      if (edit === 500) first.signal('SIGKILL');
      if (edit === 700) {
        const again = await startServeProcess(url, join(dir, 'a-again.log'));
        serves.push(again);
        backends[0] = again.url;
      }
      await new Promise((resolve) => setTimeout(resolve, 5));
    }

    const stored = () => serviceTree(readPostgres(url), 'acme', 'app');
    const own = (tree: Record<string, string>, who: string) =>
      Object.fromEntries(Object.entries(tree).filter(([path]) => path.startsWith(`flows/${who}/`)));
    await eventually(
      () => {
        const onService = stored();
        expect(own(onService, 'alice')).toEqual(own(diskTree(checkouts.alice.root), 'alice'));
        expect(own(onService, 'bob')).toEqual(own(diskTree(checkouts.bob.root), 'bob'));
      },
      120_000,
      500,
    );
    // Nothing pending, nothing in conflict, for either.
    for (const [who, repo] of Object.entries(checkouts)) {
      const env = { ...userEnv(join(repo.dir, who), service), ...NO_KEYCHAIN };
      await eventually(
        async () => {
          const { stdout } = await runFlowsync(['status', '--json'], { env });
          const [status] = JSON.parse(stdout) as { counts: { pending: number } }[];
          expect(status!.counts.pending).toBe(0);
        },
        60_000,
        1000,
      );
    }
    // One current version per file, and no file twice.
    const current = readPostgres(url)<{ n: number }>(
      `SELECT count(*) AS n FROM file_versions WHERE replaced_at IS NULL AND hash IS NOT NULL
       GROUP BY repo_id, flow_path, path HAVING count(*) > 1`,
    );
    expect(current).toEqual([]);
    // Both processes answered calls: the edits were spread over them.
    expect(balancer.answered.filter((n) => n > 0)).toHaveLength(2);
  }, 240_000);
});
