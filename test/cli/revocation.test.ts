import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import pg from 'pg';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { userEnv } from '../support/agent-process.ts';
import { runFlowsync } from '../support/cli.ts';
import { inviteMember, memberToken, redeemInvite } from '../support/members.ts';
import { startPostgresCluster, type PostgresCluster } from '../support/postgres.ts';
import { startServeProcess, type ServeProcess } from '../support/serve-process.ts';
import { callFunction } from '../support/service.ts';

/**
 * Revocation (issue 48): a member removed is refused by every service process within a second of the command
 * returning, while the others never fail. Real processes: `flowsync serve` on SQLite (one process), and two on one
 * Postgres (removed through A, refused by B: B learns it from the members' epoch it polls, or refuses calls while
 * it cannot confirm its list). The bound of one second is the issue's promise, measured here as it is promised:
 * from the moment the command returned to the start of a call that still got through.
 */
let dir: string;
let cluster: PostgresCluster | undefined;
const serves: ServeProcess[] = [];

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'flowsync-revocation-'));
});
afterEach(async () => {
  for (const serve of serves.splice(0)) await serve.stop();
});
afterAll(() => {
  cluster?.stop();
  rmSync(dir, { recursive: true, force: true });
});

interface Answer {
  startedAt: number;
  status: number;
  credential?: unknown;
}

/** Calls list_flows as `token` one after another, each 50 ms after the last answer, until `stop` resolves. */
async function keepCalling(url: string, token: string, stop: Promise<void>): Promise<Answer[]> {
  const answers: Answer[] = [];
  let stopped = false;
  void stop.then(() => (stopped = true));
  while (!stopped) {
    const startedAt = Date.now();
    const reply = await callFunction(url, `Bearer ${token}`, 'svc/flow_def/public/list_flows', {
      repo_owner: 'acme',
      repo_name: 'app',
    });
    answers.push({ startedAt, status: reply.statusCode, credential: reply.body.errorData?.credential });
    await sleep(50);
  }
  return answers;
}

/**
 * Bob and alice call through `callers[0]`/`callers[1]` while `remove` runs; returns when the command returned and
 * what each was answered, calls going on 1.5 s after it.
 */
async function duringRemoval(
  bob: { url: string; token: string },
  alice: { url: string; token: string },
  remove: () => Promise<{ code: number | null; stderr: string }>,
) {
  let finish!: () => void;
  const stop = new Promise<void>((resolve) => (finish = resolve));
  const calls = Promise.all([
    keepCalling(bob.url, bob.token, stop),
    keepCalling(alice.url, alice.token, stop),
  ]);
  await sleep(300);
  const removed = await remove();
  const returnedAt = Date.now();
  expect(removed.code, removed.stderr).toBe(0);
  await sleep(1500);
  finish();
  const [bobs, alices] = await calls;
  return { returnedAt, bobs, alices };
}

const operatorEnv = (admin: string) => ({
  ...userEnv(join(dir, 'dana')),
  FLOWSYNC_URL: '',
  FLOWSYNC_TOKEN: '',
  FLOWSYNC_ADMIN_TOKEN: admin,
});

describe('a removed member is refused within 1 s; the others never fail', { timeout: 180_000 }, () => {
  it('SQLite, one process, removed over HTTP: the first call after the command returned is refused', async () => {
    const serve = await startServeProcess(join(dir, 'one.db'), join(dir, 'one.log'));
    serves.push(serve);
    const admin = `Admin ${serve.tokens.admin}`;
    const bob = await memberToken(serve.url, admin, 'bob', 'write');
    const alice = await memberToken(serve.url, admin, 'alice', 'write');
    const { returnedAt, bobs, alices } = await duringRemoval(
      { url: serve.url, token: bob },
      { url: serve.url, token: alice },
      () =>
        runFlowsync(['service', 'member', 'remove', 'bob', '--url', serve.url], {
          env: operatorEnv(serve.tokens.admin),
        }),
    );
    expect(bobs.filter((a) => a.status === 200).length).toBeGreaterThan(0);
    // The process that removed him answered the command only once it refused him.
    expect(bobs.filter((a) => a.startedAt >= returnedAt).every((a) => a.status === 401)).toBe(true);
    expect(bobs.find((a) => a.status === 401)?.credential).toBe('removed');
    expect(alices.every((a) => a.status === 200)).toBe(true);
  });

  it('SQLite, removed with --db while serve runs: refused within 1 s, from the epoch the process polls', async () => {
    const db = join(dir, 'direct.db');
    const serve = await startServeProcess(db, join(dir, 'direct.log'));
    serves.push(serve);
    const admin = `Admin ${serve.tokens.admin}`;
    const bob = await memberToken(serve.url, admin, 'bob', 'write');
    const alice = await memberToken(serve.url, admin, 'alice', 'write');
    const { returnedAt, bobs, alices } = await duringRemoval(
      { url: serve.url, token: bob },
      { url: serve.url, token: alice },
      () => runFlowsync(['service', 'member', 'remove', 'bob', '--db', db], { env: operatorEnv('') }),
    );
    const lastServed = Math.max(...bobs.filter((a) => a.status === 200).map((a) => a.startedAt));
    expect(lastServed - returnedAt).toBeLessThanOrEqual(1000);
    expect(bobs.at(-1)!.status).toBe(401);
    expect(alices.every((a) => a.status === 200)).toBe(true);
  });

  describe('Postgres, two processes', () => {
    let url: string;
    let a: ServeProcess;
    let b: ServeProcess;
    beforeAll(async () => {
      cluster = await startPostgresCluster();
    }, 60_000);
    const start = async (env: NodeJS.ProcessEnv = {}) => {
      url = await cluster!.createDatabase();
      [a, b] = await Promise.all([
        startServeProcess(url, join(dir, 'a.log'), [], undefined, env),
        startServeProcess(url, join(dir, 'b.log'), [], undefined, env),
      ]);
      serves.push(a, b);
      return [a, b].find((serve) => serve.tokens.admin !== '')!.tokens.admin;
    };

    it('removed through A: B refuses him within 1 s of the command returning, alice is never refused', async () => {
      const admin = await start();
      const bob = await memberToken(a.url, `Admin ${admin}`, 'bob', 'write');
      const alice = await memberToken(a.url, `Admin ${admin}`, 'alice', 'write');
      const { returnedAt, bobs, alices } = await duringRemoval(
        { url: b.url, token: bob },
        { url: b.url, token: alice },
        () =>
          runFlowsync(['service', 'member', 'remove', 'bob', '--url', a.url], { env: operatorEnv(admin) }),
      );
      expect(bobs.filter((x) => x.status === 200).length).toBeGreaterThan(0);
      const lastServed = Math.max(...bobs.filter((x) => x.status === 200).map((x) => x.startedAt));
      expect(lastServed - returnedAt).toBeLessThanOrEqual(1000);
      expect(
        bobs.find((x) => x.status !== 200),
        JSON.stringify(bobs),
      ).toMatchObject({
        status: 401,
        credential: 'removed',
      });
      expect(alices.every((x) => x.status === 200)).toBe(true);
    });

    it('B hears the removal through LISTEN/NOTIFY: with its poll a minute apart, still refused within 1 s', async () => {
      // The poll (every 250 ms) would find it too; a minute apart it cannot, so what refuses bob in time is
      // MemberStore.bumpEpoch's NOTIFY. Fresh for two minutes, so B does not fail closed while it waits.
      const admin = await start({ FLOWSYNC_MEMBERS_POLL_MS: '60000', FLOWSYNC_MEMBERS_FRESH_MS: '120000' });
      const bob = await memberToken(a.url, `Admin ${admin}`, 'bob', 'write');
      const alice = await memberToken(a.url, `Admin ${admin}`, 'alice', 'write');
      const { returnedAt, bobs, alices } = await duringRemoval(
        { url: b.url, token: bob },
        { url: b.url, token: alice },
        () =>
          runFlowsync(['service', 'member', 'remove', 'bob', '--url', a.url], { env: operatorEnv(admin) }),
      );
      expect(bobs.filter((x) => x.status === 200).length).toBeGreaterThan(0);
      const lastServed = Math.max(...bobs.filter((x) => x.status === 200).map((x) => x.startedAt));
      expect(lastServed - returnedAt).toBeLessThanOrEqual(1000);
      expect(bobs.at(-1)).toMatchObject({ status: 401, credential: 'removed' });
      expect(alices.every((x) => x.status === 200)).toBe(true);
    });

    it('one invite redeemed through both processes at once: exactly one token, every time', async () => {
      const admin = await start();
      for (let round = 0; round < 5; round++) {
        const invite = await inviteMember(a.url, `Admin ${admin}`, `racer-${round}`, 'write');
        const replies = await Promise.all(
          [a, b, a, b].map((serve, n) => redeemInvite(serve.url, invite, `device-${n}`)),
        );
        expect(replies.map((reply) => reply.statusCode).sort()).toEqual([200, 401, 401, 401]);
        const winner = replies.find((reply) => reply.statusCode === 200)!.body.value as { token: string };
        // Taken at once by either process.
        for (const serve of [a, b])
          expect(
            (await callFunction(serve.url, `Bearer ${winner.token}`, 'svc/members/public/whoami', {}))
              .statusCode,
          ).toBe(200);
      }
    });

    it('a process that cannot confirm its list of members is current refuses calls (503), and takes them again after', async () => {
      const admin = await start();
      const alice = await memberToken(a.url, `Admin ${admin}`, 'alice', 'write');
      // Another session holds the members' epoch: B's reads of it wait, as they would for a database that went.
      const holder = new pg.Client({ connectionString: url });
      await holder.connect();
      try {
        await holder.query('BEGIN');
        await holder.query('LOCK TABLE members_epoch IN ACCESS EXCLUSIVE MODE');
        await sleep(1200);
        const refused = await callFunction(b.url, `Bearer ${alice}`, 'svc/members/public/whoami', {});
        expect(refused.statusCode).toBe(503);
        expect(refused.body.errorMessage).toMatch(/cannot confirm its list of members is current/);
        expect(refused.headers['retry-after']).toBeDefined();
      } finally {
        await holder.query('ROLLBACK');
        await holder.end();
      }
      const again = await callFunction(b.url, `Bearer ${alice}`, 'svc/members/public/whoami', {});
      expect(again.statusCode).toBe(200);
    });
  });
});
