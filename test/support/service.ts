import Database from 'better-sqlite3';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { request } from 'undici';
import {
  createService,
  type IssuedTokens,
  type RunningService,
  type ServiceOptions,
} from '../../src/service/index.ts';

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
  /** Read the service's SQLite file directly (read-only), to check what a call stored. */
  read<T = Record<string, unknown>>(sql: string, ...params: unknown[]): T[];
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

export function baggage(): { trace_id: string; traffic_type: string } {
  return { trace_id: randomUUID(), traffic_type: 'external' };
}

/** A real service on 127.0.0.1 with a random port and a temporary SQLite file. */
export async function startTestService(options: Partial<ServiceOptions> = {}): Promise<TestService> {
  const dir = mkdtempSync(join(tmpdir(), 'flowsync-test-'));
  const dbPath = join(dir, 'service.db');
  const logs: string[] = [];
  const logDestination = new Writable({
    write(chunk: Buffer, _encoding, done) {
      logs.push(...chunk.toString('utf8').split('\n').filter(Boolean));
      done();
    },
  });
  const start = () => createService({ dbPath, logLevel: 'info', logDestination, ...options });
  let service = await start();
  const tokens = service.issuedTokens;
  if (!tokens) throw new Error('a fresh database must issue tokens');

  const raw: TestService['raw'] = async (path, init) => {
    const response = await request(`${service.url}${path}`, {
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
  };

  const handle: TestService = {
    get url() {
      return service.url;
    },
    dir,
    dbPath,
    tokens,
    get service() {
      return service;
    },
    logs,
    call(path, args, as = 'admin') {
      const headers: Record<string, string> = { 'content-type': 'application/json' };
      if (as === 'admin') headers.authorization = `Admin ${tokens.admin}`;
      if (as === 'user') headers.authorization = `Bearer ${tokens.user}`;
      return raw(`/api/run/${path}`, {
        body: JSON.stringify({ args: { baggage: baggage(), ...args } }),
        headers,
      });
    },
    raw,
    read: readDatabase(dbPath),
    async stop() {
      await service.close();
    },
    async restart() {
      await service.close();
      service = await start();
    },
    async close() {
      await service.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
  return handle;
}
