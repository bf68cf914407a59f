import Database from 'better-sqlite3';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { request } from 'undici';
import { inject } from 'vitest';
import {
  createService,
  type IssuedTokens,
  type RunningService,
  type ServiceOptions,
} from '../../src/service/index.ts';
import { createDatabase, dropDatabase, execPostgres, readPostgres } from './postgres.ts';

export interface CallReply {
  statusCode: number;
  headers: Record<string, string | string[] | undefined>;
  /** The parsed envelope (undefined only if the body was not JSON, which a test should treat as a failure). */
  body: { status: string; value?: unknown; errorMessage?: string; errorData?: Record<string, unknown> };
}

export interface TestService {
  url: string;
  dir: string;
  dbPath: string;
  tokens: IssuedTokens;
  /** The shared tokens the first start issued (the same as `tokens` but in the members' pass). */
  sharedTokens: IssuedTokens;
  service: RunningService;
  /** Every log line the service wrote, for tests that prove no secret reaches the log. */
  logs: string[];
  /** POST a function with `{args}`; baggage is added unless `args.baggage` is given. Default caller: admin. */
  call(path: string, args: Record<string, unknown>, as?: 'user' | 'admin' | 'none'): Promise<CallReply>;
  /** A raw request for malformed-input tests. */
  raw(
    path: string,
    init: { method?: string; body?: string | Buffer; headers?: Record<string, string> },
  ): Promise<CallReply>;
  /** Read the service's database directly (read-only), to check what a call stored. */
  read<T = Record<string, unknown>>(sql: string, ...params: unknown[]): T[];
  /** Changes the database under the running service, as another program could (the fault tests). */
  exec(sql: string): void;
  /** Stop the service, keeping its database (for restart tests). */
  stop(): Promise<void>;
  /** Start again on the same database; tokens stay those of the first start. */
  restart(): Promise<void>;
  /** Stop and remove the temporary folder. */
  close(): Promise<void>;
}

/** A read-only query on a service's SQLite file, opened and closed for each call (the service keeps writing). */
export function readDatabase(dbPath: string) {
  return <T = Record<string, unknown>>(sql: string, ...params: unknown[]): T[] => {
    const db = new Database(dbPath, { readonly: true, fileMustExist: true });
    try {
      return db.prepare(sql).all(...params) as T[];
    } finally {
      db.close();
    }
  };
}

/**
 * One function call over HTTP, sent once (flowsync's client would send a 503 again), as the service at `baseUrl`
 * answers it: an in-process service's (TestService.call) or a `flowsync serve` process's. Baggage is added unless
 * `args.baggage` is given; `authorization` is the header's value (`Bearer …`, `Admin …`), or null for none.
 */
export function callFunction(
  baseUrl: string,
  authorization: string | null,
  path: string,
  args: Record<string, unknown>,
): Promise<CallReply> {
  const headers: Record<string, string> = { 'content-type': 'application/json' };
  if (authorization !== null) headers.authorization = authorization;
  return rawCall(baseUrl, `/api/run/${path}`, {
    body: JSON.stringify({ args: { baggage: baggage(), ...args } }),
    headers,
  });
}

/** A request to the service at `baseUrl` as given (TestService.raw), its reply's body parsed as an envelope. */
async function rawCall(
  baseUrl: string,
  path: string,
  init: { method?: string; body?: string | Buffer; headers?: Record<string, string> },
): Promise<CallReply> {
  const response = await request(`${baseUrl}${path}`, {
    method: (init.method ?? 'POST') as 'POST',
    body: init.body,
    headers: init.headers,
  });
  const text = await response.body.text();
  let body: CallReply['body'];
  try {
    body = JSON.parse(text);
  } catch {
    throw new Error(`reply to ${path} is not JSON (HTTP ${response.statusCode}): ${text.slice(0, 200)}`);
  }
  return { statusCode: response.statusCode, headers: response.headers, body };
}

export function baggage(): { trace_id: string; traffic_type: string } {
  return { trace_id: randomUUID(), traffic_type: 'external' };
}

/**
 * The database the service tests run on: a SQLite file, or, in the Postgres pass of the same tests
 * (FLOWSYNC_TEST_DB=postgres, the `postgres` project of vitest.config.ts), a new database of the cluster that pass
 * started. `location` is what `createService` and `flowsync serve --db` take.
 */
export interface TestDatabase {
  location: string;
  read: TestService['read'];
  exec: TestService['exec'];
  drop(): Promise<void>;
}

/** Whether this run is the Postgres pass of the service's conformance tests. */
const onPostgres = process.env.FLOWSYNC_TEST_DB === 'postgres';

export async function testDatabase(dir: string): Promise<TestDatabase> {
  if (!onPostgres) {
    const location = join(dir, 'service.db');
    const exec = (sql: string) => {
      const db = new Database(location);
      try {
        db.exec(sql);
      } finally {
        db.close();
      }
    };
    return { location, read: readDatabase(location), exec, drop: async () => undefined };
  }
  const location = await createDatabase(inject('postgresAdminUrl'));
  return {
    location,
    read: readPostgres(location),
    exec: (sql) => execPostgres(location, sql),
    drop: () => dropDatabase(inject('postgresAdminUrl'), location),
  };
}

/**
 * FLOWSYNC_TEST_TOKENS=members: the conformance tests with members' tokens (issue 48) in place of the shared ones,
 * a member who writes as the user token and an operator as the admin token, to show the spec's functions answer a
 * plain `Bearer <member token>` as they answer the shared token. (The tests of the shared tokens' own rules, a
 * scheme that must match the token's kind, do not hold there: an operator's token on `Bearer` writes as a member.)
 */
export const membersPass = process.env.FLOWSYNC_TEST_TOKENS === 'members';

async function memberTokens(url: string, shared: IssuedTokens): Promise<IssuedTokens> {
  const redeem = async (name: string, role: string) => {
    const added = await callFunction(url, `Admin ${shared.admin}`, 'svc/members/private/add', { name, role });
    const invite = (added.body.value as { invite: string }).invite;
    const redeemed = await callFunction(url, `Bearer ${invite}`, 'svc/members/action/redeem_invite/run', {
      label: 'conformance',
    });
    return (redeemed.body.value as { token: string }).token;
  };
  return {
    user: await redeem('conformance-writer', 'write'),
    admin: await redeem('conformance-operator', 'operator'),
  };
}

/** A real service on 127.0.0.1 with a random port and a temporary database (see `testDatabase`). */
export async function startTestService(options: Partial<ServiceOptions> = {}): Promise<TestService> {
  const dir = mkdtempSync(join(tmpdir(), 'flowsync-test-'));
  const database = await testDatabase(dir);
  const dbPath = database.location;
  const logs: string[] = [];
  const logDestination = new Writable({
    write(chunk: Buffer, _encoding, done) {
      logs.push(...chunk.toString('utf8').split('\n').filter(Boolean));
      done();
    },
  });
  const start = () => createService({ dbPath, logLevel: 'info', logDestination, ...options });
  let service = await start();
  const issued = service.issuedTokens;
  if (!issued) throw new Error('a fresh database must issue tokens');
  const tokens = membersPass ? await memberTokens(service.url, issued) : issued;

  const raw: TestService['raw'] = (path, init) => rawCall(service.url, path, init);

  const handle: TestService = {
    get url() {
      return service.url;
    },
    dir,
    dbPath,
    tokens,
    sharedTokens: issued,
    get service() {
      return service;
    },
    logs,
    call(path, args, as = 'admin') {
      const authorization =
        as === 'admin' ? `Admin ${tokens.admin}` : as === 'user' ? `Bearer ${tokens.user}` : null;
      return callFunction(service.url, authorization, path, args);
    },
    raw,
    read: database.read,
    exec: database.exec,
    async stop() {
      await service.close();
    },
    async restart() {
      await service.close();
      service = await start();
    },
    async close() {
      await service.close();
      await database.drop();
      rmSync(dir, { recursive: true, force: true });
    },
  };
  return handle;
}
