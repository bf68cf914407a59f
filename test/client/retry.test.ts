import Database from 'better-sqlite3';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  createClient,
  InvalidArgsError,
  ProtocolError,
  RemoteError,
  TransportError,
  type RemoteClient,
} from '../../src/client/index.ts';
import { fileEntry, sha256 } from '../support/flows.ts';
import { startFaultProxy, type FaultProxy } from '../support/fault-proxy.ts';
import { startServeProcess } from '../support/serve-process.ts';
import { startTestService, type TestService } from '../support/service.ts';

const FAST_RETRY = { attempts: 4, baseDelayMs: 20, maxDelayMs: 100 };
const slugArgs = () => ({
  slug: 'wt',
  type: 'init-worktree-created',
  ts: Date.now(),
  payload: { slug: 'wt', type: 'init-worktree-created' as const },
});

describe('retry across a real service process stopped and started again', () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'flowsync-retry-'));
  });
  afterEach(() => {
    rmSync(dir, { recursive: true, force: true });
  });

  it('a call sent while the service is down goes through once it is back, exactly once', async () => {
    const dbPath = join(dir, 'service.db');
    const first = await startServeProcess(dbPath, join(dir, 'log'));
    const port = new URL(first.url).port;
    await first.stop();

    const client = createClient({
      baseUrl: first.url,
      auth: { userToken: first.tokens.user },
      // About 40 s of tries: starting `flowsync serve` again took over 5 s once on a loaded machine, and ran out
      // the 30 tries this test had (a failed CI-loop run).
      retry: { attempts: 200, baseDelayMs: 50, maxDelayMs: 200 },
      // The time-out bounds the tries too: room for all of them.
      timeoutMs: 60_000,
      actionTimeoutMs: 60_000,
    });
    try {
      // Both are in flight while nothing listens: sync_batch is safe to repeat, slug log only when never sent.
      const batch = client.flowDef.syncBatch({
        repo_owner: 'acme',
        repo_name: 'app',
        flows: [{ flow_path: 'flows/a', files: [fileEntry('main.yaml', 'steps: []')] }],
      });
      const logged = client.slug.log(slugArgs());
      await sleep(400);
      const second = await startServeProcess(dbPath, join(dir, 'log'), ['--port', port]);
      try {
        // Both awaited together: one failing must not leave the other's rejection unhandled.
        const [synced, log] = await Promise.all([batch, logged]);
        expect(synced).toMatchObject({ files_created: 1, flows_synced: 1 });
        expect(log.id).toBeGreaterThan(0);
      } finally {
        await second.stop();
      }
    } finally {
      await client.close();
    }
    const db = new Database(dbPath, { readonly: true });
    expect(db.prepare('SELECT count(*) FROM slug_log').pluck().get()).toBe(1);
    expect(db.prepare('SELECT hash FROM flow_files').pluck().all()).toEqual([sha256('steps: []')]);
    db.close();
  });

  it('gives up with a TransportError that says what to do when the service stays down', async () => {
    const client = createClient({
      baseUrl: 'http://127.0.0.1:9',
      auth: { userToken: 't' },
      retry: FAST_RETRY,
    });
    const error = await client.repoConfig.update({ owner: 'a', name: 'b' }).catch((e: unknown) => e);
    await client.close();
    expect(error).toBeInstanceOf(TransportError);
    expect(error).toMatchObject({ code: 'ECONNREFUSED', attempts: 4 });
    expect((error as Error).message).toMatch(
      /Cannot reach the service at http:\/\/127\.0\.0\.1:9 .*flowsync serve/,
    );
  });
});

describe('a socket that never answers', () => {
  let server: Server;
  let url: string;
  const sockets: Socket[] = [];
  let connections = 0;
  beforeEach(async () => {
    connections = 0;
    // Counts requests that arrived (a socket that received bytes): undici may open an idle spare connection.
    server = createServer((socket) => {
      sockets.push(socket);
      socket.once('data', () => connections++);
    });
    await new Promise<void>((ready) => server.listen(0, '127.0.0.1', ready));
    url = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
  });
  afterEach(async () => {
    for (const socket of sockets.splice(0)) socket.destroy();
    await new Promise((done) => server.close(done));
  });

  it('times out once, even for a function safe to repeat: the time-out bounds the whole call, then says so in one line', async () => {
    // Retrying after a time-out would multiply the wait (4 × 30 s for `flowsync call`, 2 × 120 s for the window).
    const client = createClient({
      baseUrl: url,
      auth: { userToken: 't' },
      timeoutMs: 300,
      retry: { ...FAST_RETRY, attempts: 2 },
    });
    const error = await client.repoConfig.update({ owner: 'a', name: 'b' }).catch((e: unknown) => e);
    await client.close();
    expect(error).toBeInstanceOf(TransportError);
    expect(error).toMatchObject({ code: 'TIMEOUT', attempts: 1 });
    expect((error as Error).message).toMatch(/No reply from .* within 0\.3 s; the service is busy or stuck/);
    expect(connections).toBe(1);
  });

  it('does not repeat a function that appends once the request may have been received', async () => {
    const client = createClient({
      baseUrl: url,
      auth: { userToken: 't' },
      timeoutMs: 300,
      retry: FAST_RETRY,
    });
    const error = await client.slug.log(slugArgs()).catch((e: unknown) => e);
    await client.close();
    expect(error).toMatchObject({ code: 'TIMEOUT', attempts: 1 });
    expect(connections).toBe(1);
  });

  it('an action gets the longer default time-out, a per-call one wins', async () => {
    const client = createClient({
      baseUrl: url,
      auth: { userToken: 't' },
      timeoutMs: 100,
      retry: { attempts: 1 },
    });
    const error = await client.flowDef
      .syncBatch({ repo_owner: 'a', repo_name: 'b', flows: [] }, { timeoutMs: 250 })
      .catch((e: unknown) => e);
    await client.close();
    expect(error).toMatchObject({ code: 'TIMEOUT' });
    // The message names the time-out that applied: the call's 0.25 s, not the client's 0.1 s.
    expect((error as Error).message).toContain('within 0.25 s');
  });
});

describe('replies that say "not now", "no" or nonsense (through a fault-injecting proxy)', () => {
  let svc: TestService;
  let proxy: FaultProxy;
  let client: RemoteClient;
  beforeEach(async () => {
    svc = await startTestService();
    proxy = await startFaultProxy(svc.url);
    client = createClient({ baseUrl: proxy.url, auth: { adminToken: svc.tokens.admin }, retry: FAST_RETRY });
  });
  afterEach(async () => {
    await client.close();
    await proxy.close();
    await svc.close();
  });
  const busy = (status: number, headers: Record<string, string> = {}) => ({
    status,
    headers,
    body: JSON.stringify({ status: 'error', errorMessage: 'busy', errorData: {} }),
  });

  it('repeats a safe call on 503, 502, 429 and 408', async () => {
    proxy.fault = (_path, index) =>
      [busy(503, { 'retry-after': '0' }), busy(502), busy(429), busy(408)][index] ?? null;
    const patient = createClient({
      baseUrl: proxy.url,
      auth: { adminToken: svc.tokens.admin },
      retry: { ...FAST_RETRY, attempts: 5 },
    });
    const value = await patient.tracker.workflowStateCacheGetByTeam({ team_id: 'ENG' });
    await patient.close();
    expect(value).toMatchObject({ team_id: 'ENG' });
    expect(proxy.requests).toHaveLength(5);
  });

  it('reads Retry-After: a server that asks for more than a minute gets no retry, only its 503', async () => {
    // Back-off alone would have retried within 100 ms; only a client that read the header gives up here.
    proxy.fault = () => busy(503, { 'retry-after': '120' });
    const error = await client.tracker
      .workflowStateCacheGetByTeam({ team_id: 'ENG' })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(RemoteError);
    expect(error).toMatchObject({ statusCode: 503 });
    expect(proxy.requests).toHaveLength(1);
  });

  it('a Retry-After longer than the time left is not waited for: the 503 is the answer, within the time-out', async () => {
    // Four 503s asking for 2 s each would hold a caller (the window) 6 s past its 0.5 s time-out.
    proxy.fault = () => busy(503, { 'retry-after': '2' });
    const hurried = createClient({
      baseUrl: proxy.url,
      auth: { adminToken: svc.tokens.admin },
      retry: FAST_RETRY,
      timeoutMs: 500,
    });
    const error = await hurried.tracker
      .workflowStateCacheGetByTeam({ team_id: 'ENG' })
      .catch((e: unknown) => e);
    await hurried.close();
    expect(error).toBeInstanceOf(RemoteError);
    expect(error).toMatchObject({ statusCode: 503 });
    expect(proxy.requests).toHaveLength(1);
  });

  it('keeps 4,000 characters of a service message: a longer one would be stored for each refused flow', async () => {
    proxy.fault = () => ({
      status: 400,
      body: JSON.stringify({ status: 'error', errorMessage: 'no '.repeat(500_000), errorData: {} }),
    });
    const error = await client.tracker
      .workflowStateCacheGetByTeam({ team_id: 'ENG' })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(RemoteError);
    expect((error as RemoteError).errorMessage).toBe(`${'no '.repeat(500_000).slice(0, 4_000)}…`);
  });

  it('does not repeat a call that appends a record after a 503: the service may have stored it', async () => {
    proxy.fault = (_path, index) => (index === 0 ? busy(503) : null);
    const error = await client.slug.log(slugArgs()).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(RemoteError);
    expect(error).toMatchObject({ statusCode: 503 });
    expect(proxy.requests).toHaveLength(1);
  });

  it('never repeats a 4xx', async () => {
    const notFound = await client.flowDef
      .updateFile({ fileId: 'nope', content: 'x' })
      .catch((e: unknown) => e);
    expect(notFound).toMatchObject({ statusCode: 422 });
    const forbidden = createClient({ baseUrl: proxy.url, auth: { userToken: 'wrong' }, retry: FAST_RETRY });
    const unauthenticated = await forbidden.repoConfig
      .update({ owner: 'a', name: 'b' })
      .catch((e: unknown) => e);
    await forbidden.close();
    expect(unauthenticated).toMatchObject({ statusCode: 401 });
    expect(proxy.requests).toHaveLength(2);
  });

  it('checks args before sending: each bad field named, nothing sent', async () => {
    const error = await client.flowDef
      .syncBatch({ repo_owner: 7, repo_name: '', flows: [{ flow_path: 'x', files: 'no' }] } as never)
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(InvalidArgsError);
    const message = (error as Error).message;
    for (const field of ['args.repo_owner', 'args.repo_name', 'args.flows.0.files'])
      expect(message).toContain(field);
    expect(proxy.requests).toEqual([]);
  });

  it.each([
    ['an HTML error page', { status: 200, body: '<html>Bad gateway</html>' }, /not JSON/],
    ['JSON that is not an envelope', { status: 200, body: '{"ok":true}' }, /not an envelope/],
    [
      'a value of the wrong shape',
      { status: 200, body: '{"status":"success","value":{"team_id":7}}' },
      /wrong shape: value\.team_id/,
    ],
  ])('turns %s into a ProtocolError', async (_name, fault, message) => {
    proxy.fault = () => fault;
    const error = await client.tracker
      .workflowStateCacheGetByTeam({ team_id: 'ENG' })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ProtocolError);
    expect((error as Error).message).toMatch(message);
  });
});
