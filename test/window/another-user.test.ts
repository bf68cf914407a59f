import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { chmodSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { Agent as HttpAgent, request as httpRequest } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { Agent, agentConfigSchema } from '../../src/agent/index.ts';
import { createSecretStore } from '../../src/secrets/index.ts';
import {
  createAgentApi,
  startBridge,
  statusEvents,
  type AgentApi,
  type Bridge,
} from '../../src/window/index.ts';
import { makeRepo, type TestRepo } from '../support/repo.ts';
import { startTestService, type TestService } from '../support/service.ts';
import { createUnixUser, type UnixUser } from '../support/unix-user.ts';
import { request } from '../support/loopback.ts';
import { windowSession } from '../support/window.ts';

/**
 * Another real user of this machine against the user's window (issue 38): whatever state their socket is in when
 * the bridge reads their request, and whatever credential they found, they get no answer and no action.
 */

/**
 * The attacker's request, written on a raw socket, which then is left open, half-closed (`end`), closed, reset, or
 * left behind by a process that exits. Prints the local port, then the status line it was answered, if any.
 */
const REQUEST = `
const [host, mode, method, path, authorization, body] = process.argv.slice(1);
const port = Number(host.split(':').pop());
const socket = require('node:net').connect(port, '127.0.0.1', () => {
  console.log('from ' + socket.localPort);
  const head = [method + ' ' + path + ' HTTP/1.1', 'Host: ' + host, 'Content-Type: application/json',
    'Origin: http://' + host, 'Content-Length: ' + Buffer.byteLength(body), 'Connection: close'];
  if (authorization) head.push('Authorization: Bearer ' + authorization);
  const request = head.join('\\r\\n') + '\\r\\n\\r\\n' + body;
  // Half-closed with the request: the data and the FIN are sent at once, so the bridge reads a request whose client
  // is in FIN_WAIT2 by then.
  if (mode === 'half') return socket.end(request);
  socket.write(request, () => {
    if (mode === 'close') socket.destroy();
    if (mode === 'reset') socket.resetAndDestroy();
    if (mode === 'exit') process.exit(0);
  });
});
let answer = '';
socket.on('data', (chunk) => {
  answer += chunk;
  // The status line is the answer (an event stream would never end).
  if (answer.includes('\\r\\n\\r\\n')) { console.log('answer ' + answer.split('\\r\\n')[0] + ' ' + answer.split('\\r\\n\\r\\n')[1]); process.exit(0); }
});
socket.on('close', () => { console.log('answer ' + (answer.split('\\r\\n')[0] || 'none')); process.exit(0); });
socket.on('error', (error) => console.log('error ' + error.code));
`;

/** Finds a launch address in another process's argv, as any user may read it in /proc, and trades it. */
const FROM_PROC = `
const { readdirSync, readFileSync } = require('node:fs');
const port = process.argv[1];
const look = () => {
  for (const pid of readdirSync('/proc').filter((name) => /^\\d+$/.test(name))) {
    let argv = '';
    try { argv = readFileSync('/proc/' + pid + '/cmdline', 'utf8'); } catch { continue; }
    const found = /http:\\/\\/([a-z0-9]+\\.localhost:(\\d+))\\/#token=([\\w-]+)/.exec(argv);
    if (!found || found[2] !== port) continue;
    console.log('read ' + found[3]);
    // To the loopback, with the window's name as the Host, as a browser sends it.
    const request = require('node:http').request({ host: '127.0.0.1', port: Number(port), method: 'POST',
      path: '/api/session', headers: { host: found[1], 'content-type': 'application/json',
      origin: 'http://' + found[1] } }, (response) => {
        let text = '';
        response.on('data', (chunk) => (text += chunk));
        response.on('end', () => console.log('answer ' + response.statusCode + ' ' + text));
      });
    return request.end(JSON.stringify({ launch: found[3] }));
  }
  setTimeout(look, 20);
};
look();
`;

const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');

let svc: TestService;
let repo: TestRepo;
let agent: Agent;
let api: AgentApi;
let bridge: Bridge;
let session: string;
let attacker: UnixUser;

beforeAll(async () => {
  attacker = createUnixUser();
  svc = await startTestService();
  repo = makeRepo({ 'flows/hello/main.yaml': 'hello\n' });
  agent = await Agent.open({
    config: agentConfigSchema.parse({ serviceUrl: svc.url, repositories: [{ path: repo.root }] }),
    statePath: join(repo.dir, 'state.db'),
    secrets: createSecretStore({ FLOWSYNC_TOKEN: svc.tokens.user }),
  });
  await agent.addConfigured();
  api = createAgentApi(agent);
  bridge = await startBridge({ api, subscribe: statusEvents(agent, api) });
  session = await windowSession(bridge);
});
afterAll(async () => {
  await attacker?.remove();
  await bridge?.close();
  await agent?.close();
  await svc?.close();
  repo?.cleanup();
});

/** Runs the attacker's program to its end (started, not run: the bridge answers from this process). */
async function asAttacker(script: string, args: string[]): Promise<string> {
  const child = attacker.start(process.execPath, ['-e', script, ...args]);
  let out = '';
  child.stdout!.on('data', (chunk: Buffer) => (out += chunk.toString()));
  child.stderr!.on('data', (chunk: Buffer) => (out += chunk.toString()));
  await new Promise((exited) => child.once('exit', exited));
  return out;
}

/** Whether the bridge still holds its end of the connection from this port open (ESTABLISHED or CLOSE_WAIT). */
function bridgeHolds(from: number): boolean {
  const hex = (port: number) => port.toString(16).toUpperCase().padStart(4, '0');
  return ['/proc/net/tcp', '/proc/net/tcp6'].some((table) =>
    readFileSync(table, 'utf8')
      .split('\n')
      .some((line) => {
        const fields = line.trim().split(/\s+/);
        return (
          fields[1]?.endsWith(`:${hex(bridge.port)}`) &&
          fields[2]?.endsWith(`:${hex(from)}`) &&
          ['01', '08'].includes(fields[3]!)
        );
      }),
  );
}

async function paused(): Promise<boolean> {
  const { repositories } = await api.status({});
  return repositories.find((r) => r.root === repo.root)?.paused ?? false;
}

describe('a request from another user, whatever the state of its socket', () => {
  const pause = () => JSON.stringify({ root: repo.root });
  // Each case on its own: one that got through is undone before the next.
  afterEach(async () => {
    if (await paused()) await api.resumeRepository({ root: repo.root });
  });
  it.each(['open', 'half', 'close', 'reset', 'exit'])(
    'pauses nothing with a valid session from a socket left %s',
    async (mode) => {
      const out = await asAttacker(REQUEST, [
        new URL(bridge.address).host,
        mode,
        'POST',
        '/api/pauseRepository',
        session,
        pause(),
      ]);
      const from = Number(/from (\d+)/.exec(out)?.[1]);
      expect(from, out).toBeGreaterThan(0);
      expect(out).not.toContain('Error');
      // Done with the request once the bridge let the connection go; then one call of the user's own after it.
      await expect.poll(() => bridgeHolds(from), { timeout: 30_000 }).toBe(false);
      await api.status({});
      expect(await paused()).toBe(false);
      if (mode === 'open' || mode === 'half') expect(out).toContain('answer HTTP/1.1 403');
    },
  );

  it.each([
    ['status', () => '/api/status', () => session, () => '{}'],
    ['the event stream', () => `GET /api/events?token=${session}`, () => '', () => ''],
    ['a new launch address', () => '/api/launch', () => new URL(bridge.agentUrl).hash.slice(7), () => '{}'],
    [
      'a session',
      () => '/api/session',
      () => '',
      () => JSON.stringify({ launch: new URL(bridge.launchUrl()).hash.slice(7) }),
    ],
    [
      'the proof a page asks for before it sends its session',
      () => '/api/hello',
      () => '',
      () => JSON.stringify({ id: sha256(sha256(session)), challenge: 'a-challenge-of-the-attacker' }),
    ],
  ])('is answered 403 for %s from a half-closed socket', async (_what, path, credential, body) => {
    const [method, route] = path().includes(' ') ? path().split(' ') : ['POST', path()];
    const out = await asAttacker(REQUEST, [
      new URL(bridge.address).host,
      'half',
      method!,
      route!,
      credential(),
      body(),
    ]);
    expect(out).toContain('answer HTTP/1.1 403');
  });
});

describe('a launch address read in /proc', () => {
  let dir: string;
  afterAll(() => {
    // The "browser" waits for nothing but to be read; ended by its pid, found by its address.
    for (const pid of readdirSync('/proc').filter((name) => /^\d+$/.test(name))) {
      try {
        if (readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes(join(dir, 'browser')))
          process.kill(Number(pid));
      } catch {
        // gone meanwhile
      }
    }
    rmSync(dir, { recursive: true, force: true });
  });

  it("opens nothing for another user, and still opens the user's own window", async () => {
    dir = mkdtempSync(join(tmpdir(), 'flowsync-browser-'));
    // A browser slow to start: its argv holds the launch address meanwhile, as `flowsync ui --open` gives it.
    writeFileSync(join(dir, 'browser'), '#!/bin/sh\nsleep 60\n');
    chmodSync(join(dir, 'browser'), 0o755);
    const reading = asAttacker(FROM_PROC, [String(bridge.port)]);
    const url = bridge.launchUrl();
    // As `flowsync ui --open` starts `$BROWSER` (src/cli/window-address.ts): the address is its argument.
    spawn(join(dir, 'browser'), [url], { stdio: 'ignore', detached: true }).unref();
    const out = await reading;
    expect(out).toContain(`read ${new URL(url).hash.slice(7)}`);
    expect(out).toMatch(/answer 403/);
    expect(out).not.toContain('"session"');
    // The user's own page, once the browser is up, trades the same address.
    const origin = new URL(bridge.address).origin;
    const response = await request(`${origin}/api/session`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', origin },
      body: JSON.stringify({ launch: new URL(url).hash.slice(7) }),
    });
    expect(response.statusCode).toBe(200);
    await response.body.dump();
  });
});

describe('a request with no valid credential', () => {
  it('is answered with its connection closed, so it keeps no slot for a next try', async () => {
    const agent = new HttpAgent({ keepAlive: true });
    try {
      const answer = await new Promise<{ status: number; connection: string | undefined }>(
        (resolve, reject) => {
          const request = httpRequest(
            {
              host: '127.0.0.1',
              port: bridge.port,
              method: 'POST',
              path: '/api/status',
              agent,
              headers: {
                host: new URL(bridge.address).host,
                'content-type': 'application/json',
                authorization: 'Bearer not-a-session-0001',
              },
            },
            (response) => {
              response.resume();
              resolve({ status: response.statusCode ?? 0, connection: response.headers.connection });
            },
          );
          request.on('error', reject);
          request.end('{}');
        },
      );
      expect(answer).toEqual({ status: 401, connection: 'close' });
    } finally {
      agent.destroy();
    }
  });
});
