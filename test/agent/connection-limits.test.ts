import { existsSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startAgentProcess, userEnv, type AgentProcess } from '../support/agent-process.ts';
import { holdMany, openDescriptors, type HeldSocket } from '../support/raw-sockets.ts';
import { makeRepo, type TestRepo } from '../support/repo.ts';

let repo: TestRepo;
let agent: AgentProcess;
let data: string;
let bridgePort: number;
let bridgeHost: string;
let bridgeToken: string;
let serviceUrl: string;
const sockets: HeldSocket[] = [];

// Logs rotate at 4 KiB here (5 MiB in use), so a burst of a few hundred requests shows the rotation.
const LOG_CAP = 4096;

beforeAll(async () => {
  repo = makeRepo({ 'flows/hello/main.yaml': 'hello\n' });
  const home = join(repo.dir, 'home');
  data = join(home, '.local/share/flowsync');
  agent = startAgentProcess(['start', repo.root], {
    ...userEnv(home, 'embedded'),
    // Idle connections are closed after 1 s here (30 s in use), so the test waits seconds, not minutes.
    FLOWSYNC_IDLE_TIMEOUT_MS: '1000',
    FLOWSYNC_LOG_MAX_BYTES: String(LOG_CAP),
  });
  await agent.waitFor(/Window: (\S+)/);
  await agent.waitFor(/Watching 1 repository/);
  // The printed address has no token (stdout is a pipe): the agent's own token is in its lock, as for `ui --open`.
  const lock = JSON.parse(readFileSync(join(data, 'agent.lock'), 'utf8')) as { bridge: string };
  const window = new URL(lock.bridge);
  bridgePort = Number(window.port);
  bridgeHost = window.host;
  bridgeToken = window.hash.replace('#token=', '');
  serviceUrl = /syncing with (\S+) \(the embedded service\)/.exec(agent.output())![1]!;
});
afterAll(async () => {
  for (const held of sockets) held.socket.destroy();
  agent?.signal('SIGKILL');
  await agent?.exited;
  repo?.cleanup();
});

const bridge = (path: string, init: { method?: 'GET' | 'POST'; headers?: Record<string, string> } = {}) =>
  request(`http://127.0.0.1:${bridgePort}${path}`, {
    method: init.method ?? 'GET',
    headers: { host: bridgeHost, 'content-type': 'application/json', ...init.headers },
    body: init.method === 'POST' ? '{}' : undefined,
  });

describe("idle connections to the agent's window and service, from any local process", () => {
  it('cannot take its file descriptors: they are capped, closed when idle, and the window still answers', async () => {
    const before = openDescriptors(agent.pid);
    let most = before;
    const count = () => (most = Math.max(most, openDescriptors(agent.pid)));
    for (let round = 0; round < 5; round++) {
      sockets.push(
        ...(await holdMany(400, bridgePort)),
        ...(await holdMany(400, Number(new URL(serviceUrl).port))),
      );
      count();
    }
    await expect
      .poll(
        () => {
          count();
          return sockets.filter((held) => !held.closed()).length;
        },
        { timeout: 30_000 },
      )
      .toBe(0);
    // 4,000 connections were held; the bridge keeps 128 and the service 256, and each holds up to four times that
    // until its next sorting, 20 ms or so away (HELD_WHILE_SORTING in connection-limits.ts).
    expect(most - before).toBeLessThan(4 * (128 + 256) + 100);

    const page = await bridge('/');
    expect(page.statusCode).toBe(200);
    expect(await page.body.text()).toContain('<!doctype html>');
    const status = await bridge('/api/status', {
      method: 'POST',
      headers: { authorization: `Bearer ${bridgeToken}` },
    });
    expect(status.statusCode).toBe(200);
    await status.body.dump();
  });
});

describe("a folder of the window's files", () => {
  it('is a 404, not an error with a stack in agent.log', async () => {
    const log = join(data, 'agent.log');
    const logged = () => (existsSync(log) ? readFileSync(log, 'utf8') : '');
    const earlier = logged().length;
    for (const path of ['/assets/', '/assets', '/assets//', '/./assets/']) {
      const reply = await bridge(path);
      expect(reply.statusCode, path).toBe(404);
      await reply.body.dump();
    }
    expect(logged().slice(earlier)).not.toContain('stack');
  });
});

describe('a burst of requests that each write a line to a log', () => {
  it('keeps service.log and agent.log under their cap, rotated to .1 while the agent runs', async () => {
    const serviceLog = join(data, 'service.log');
    const agentLog = join(data, 'agent.log');
    const call = () =>
      request(`${serviceUrl}/api/run/svc/flow_def/action/sync_batch/run`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: 'Bearer fsu_not-a-token' },
        body: JSON.stringify({ args: {} }),
      }).then((reply) => reply.body.dump());
    // Each refused call is a line in service.log, and each folder request was a stack in agent.log before the fix.
    // Repeats are summed up once a second, so the burst goes on (at most 20 s) until service.log has rotated.
    const until = Date.now() + 20_000;
    let rounds = 0;
    while ((rounds < 20 || !existsSync(`${serviceLog}.1`)) && Date.now() < until) {
      rounds++;
      // 40 at a time, under the bridge's cap of 128 connections.
      await Promise.all(Array.from({ length: 40 }, call));
      await Promise.all(
        Array.from({ length: 40 }, () => bridge('/assets/').then((reply) => reply.body.dump())),
      );
      expect(statSync(serviceLog).size).toBeLessThanOrEqual(LOG_CAP);
      if (existsSync(agentLog)) expect(statSync(agentLog).size).toBeLessThanOrEqual(LOG_CAP);
    }
    expect(existsSync(`${serviceLog}.1`)).toBe(true);
    for (const file of [serviceLog, `${serviceLog}.1`]) {
      expect(statSync(file).size).toBeLessThanOrEqual(LOG_CAP);
      expect(statSync(file).mode & 0o777).toBe(0o600);
    }
    const lines = [`${serviceLog}.1`, serviceLog].flatMap((file) =>
      readFileSync(file, 'utf8').trim().split('\n'),
    );
    // Every line is still one JSON object, and the repeats are summed up in lines of their own.
    expect(lines.filter((line) => !isJson(line))).toEqual([]);
    expect(lines.join('\n')).toMatch(/repeated [\d,]+ more times/);
  });
});

function isJson(line: string): boolean {
  try {
    JSON.parse(line);
    return true;
  } catch {
    return false;
  }
}
