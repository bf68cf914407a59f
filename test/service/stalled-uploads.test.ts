import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hold, holdMany, residentBytes, type HeldSocket } from '../support/raw-sockets.ts';
import { startServeProcess, type ServeProcess } from '../support/serve-process.ts';

let dir: string;
let serve: ServeProcess;
const sockets: HeldSocket[] = [];

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'flowsync-stalled-'));
  // Idle connections and stalled bodies are given up on after 1 s here (30 s and 60 s in use), so the test is short.
  // Its log goes to a file of 4 KiB at most (5 MiB in use).
  const logFile = ['--log-file', join(dir, 'serve.log')];
  serve = await startServeProcess(join(dir, 'service.db'), join(dir, 'service.log'), logFile, undefined, {
    FLOWSYNC_IDLE_TIMEOUT_MS: '1000',
    FLOWSYNC_LOG_MAX_BYTES: '4096',
  });
});
afterAll(async () => {
  for (const held of sockets) held.socket.destroy();
  await serve?.stop();
  rmSync(dir, { recursive: true, force: true });
});

const MIB = 1024 * 1024;

/** The head of an 8 MiB upload to sync_batch; the body is whatever the caller writes after it. */
function uploadHead(authorization?: string): string {
  return (
    'POST /api/run/svc/flow_def/action/sync_batch/run HTTP/1.1\r\n' +
    `Host: 127.0.0.1:${serve.port}\r\n` +
    'Content-Type: application/json\r\n' +
    `Content-Length: ${8 * MIB}\r\n` +
    (authorization ? `Authorization: ${authorization}\r\n` : '') +
    '\r\n'
  );
}

/** Part of a body: the start of `{"args": …` and then `bytes` of a string that never ends. */
const partialBody = (bytes: number) => `{"args":{"flows":"${'a'.repeat(bytes)}`;

describe('uploads that stall, from a caller without a token', () => {
  it('are refused with 401 before the body is read, and closed; the service stays small', async () => {
    const before = residentBytes(serve.pid);
    let peak = before;
    const sample = () => (peak = Math.max(peak, residentBytes(serve.pid)));

    // Headers only, the 8 MiB body never sent: no token, a token of the wrong scheme, a token nobody issued.
    const headsOnly = [
      ...(await holdMany(40, serve.port, uploadHead())),
      ...(await holdMany(40, serve.port, uploadHead('Basic abc'))),
      ...(await holdMany(40, serve.port, uploadHead('Bearer fsu_not-a-token'))),
    ];
    // 4 of the 8 MiB sent, then nothing: what the service keeps of these is what it read before asking who.
    const halfSent = await holdMany(
      50,
      serve.port,
      uploadHead('Bearer fsu_not-a-token') + partialBody(4 * MIB),
      10,
    );
    sockets.push(...headsOnly, ...halfSent);

    await expect
      .poll(
        () => {
          sample();
          return headsOnly.filter((held) => !held.answer().startsWith('HTTP/1.1 401')).length;
        },
        { timeout: 30_000 },
      )
      .toBe(0);
    await expect
      .poll(
        () => {
          sample();
          return [...headsOnly, ...halfSent].filter((held) => !held.closed()).length;
        },
        { timeout: 30_000 },
      )
      .toBe(0);
    // Generous: 50 bodies of 4 MiB kept as strings took it up by some 400 MB before the fix.
    expect(peak - before).toBeLessThan(200 * MIB);
    // 170 refused calls, a line each, summed up in a private log under its cap.
    const log = join(dir, 'serve.log');
    await expect.poll(() => readFileSync(log, 'utf8')).toMatch(/"status":401/);
    expect(statSync(log).size).toBeLessThanOrEqual(4096);
    expect(statSync(log).mode & 0o777).toBe(0o600);
  });
});

describe('an upload with a valid token whose body stalls', () => {
  it('is closed by the body time-out, and the service answers the next call', async () => {
    const stalled = await holdMany(
      10,
      serve.port,
      uploadHead(`Bearer ${serve.tokens.user}`) + partialBody(MIB),
      5,
    );
    const idle = await holdMany(20, serve.port);
    sockets.push(...stalled, ...idle);
    await expect
      .poll(() => [...stalled, ...idle].filter((held) => !held.closed()).length, { timeout: 30_000 })
      .toBe(0);

    const reply = await request(`${serve.url}/api/run/svc/tracker/private/workflow_state_cache_get_by_team`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Admin ${serve.tokens.admin}` },
      body: JSON.stringify({
        args: { baggage: { trace_id: 't1', traffic_type: 'external' }, team_id: 'ENG' },
      }),
    });
    expect(reply.statusCode).toBe(200);
    await reply.body.dump();
  });

  it('a keep-alive connection that sent one call and went quiet is closed too', async () => {
    const body = JSON.stringify({
      args: { baggage: { trace_id: 't2', traffic_type: 'external' }, team_id: 'ENG' },
    });
    const held = await hold(
      serve.port,
      'POST /api/run/svc/tracker/private/workflow_state_cache_get_by_team HTTP/1.1\r\n' +
        `Host: 127.0.0.1:${serve.port}\r\nContent-Type: application/json\r\n` +
        `Authorization: Admin ${serve.tokens.admin}\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
    );
    sockets.push(held);
    await expect.poll(() => held.answer()).toMatch(/^HTTP\/1\.1 200/);
    await expect.poll(() => held.closed(), { timeout: 30_000 }).toBe(true);
  });
});
