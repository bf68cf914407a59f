import Database from 'better-sqlite3';
import { execFileSync } from 'node:child_process';
import {
  closeSync,
  existsSync,
  ftruncateSync,
  mkdirSync,
  mkdtempSync,
  openSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { request as httpRequest } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { Agent, agentConfigSchema } from '../../src/agent/index.ts';
import { createClient } from '../../src/client/index.ts';
import {
  AgentNotAnswering,
  connectToBridge,
  createAgentApi,
  startBridge,
  statusEvents,
  type AgentEvent,
  type Bridge,
} from '../../src/window/index.ts';
import { INCIDENT_ID, agentLog, privateSocketPlace } from '../../src/host/index.ts';
import { createSecretStore } from '../../src/secrets/index.ts';
import { diskTree, eventually, makeRepo, serviceTree, type TestRepo } from '../support/repo.ts';
import { startTestService, type TestService } from '../support/service.ts';
import { seedLoginTasks } from '../support/tracker.ts';
import { request } from '../support/loopback.ts';
import { almostToken } from '../support/tokens.ts';
import { windowSession } from '../support/window.ts';

let svc: TestService;
let repo: TestRepo;
let agent: Agent;
let bridge: Bridge;
let token: string;
let origin: string;

beforeEach(async () => {
  svc = await startTestService();
  repo = makeRepo({ 'flows/hello/main.yaml': 'hello\n' });
  execFileSync('git', ['-C', repo.root, 'init', '-q']);
  execFileSync('git', ['-C', repo.root, 'remote', 'add', 'origin', 'git@github.com:acme/app.git']);
  execFileSync('git', ['-C', repo.root, 'config', 'user.email', 'ada@example.com']);
  agent = await Agent.open({
    config: agentConfigSchema.parse({ serviceUrl: svc.url }),
    statePath: join(repo.dir, 'state.db'),
    secrets: createSecretStore({ FLOWSYNC_TOKEN: svc.tokens.user, FLOWSYNC_ADMIN_TOKEN: svc.tokens.admin }),
    timings: { presenceIntervalMs: 100 },
  });
  await agent.watchAll();
  const api = createAgentApi(agent);
  bridge = await startBridge({ api, subscribe: statusEvents(agent, api) });
  // What the window presents: a session, traded for the launch token of its address.
  token = await windowSession(bridge);
  origin = new URL(bridge.address).origin;
});
afterEach(async () => {
  await bridge.close();
  await agent.close();
  await svc.close();
  repo.cleanup();
});

/** The newest status pushed (activity entries come on the same stream). */
function lastStatus(events: AgentEvent[]) {
  return events.findLast((event) => event.type === 'status')?.status;
}

/** A reply as parsed JSON: each test reads the fields it checks. */
type Parsed = ReturnType<typeof JSON.parse>;

async function call(method: string, input: unknown = {}, headers: Record<string, string> = {}) {
  const response = await request(`${origin}/api/${method}`, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      authorization: `Bearer ${token}`,
      origin,
      ...headers,
    },
    body: JSON.stringify(input),
  });
  return {
    status: response.statusCode,
    body: (await response.body.json()) as { ok: boolean; value?: Parsed; error?: Parsed },
  };
}

describe('the loopback bridge', () => {
  it("is at a name of this run's under localhost, on both loopbacks, and gives launch addresses whose token is after #", async () => {
    expect(bridge.launchUrl()).toMatch(/^http:\/\/[a-z0-9]{20,}\.localhost:\d+\/#token=[\w-]{32}$/);
    expect(bridge.address).toBe(`${origin}/`);
    // Another run (another bridge) has another name.
    const api = createAgentApi(agent);
    const other = await startBridge({ api, subscribe: statusEvents(agent, api) });
    try {
      expect(new URL(other.address).hostname).not.toBe(new URL(bridge.address).hostname);
    } finally {
      await other.close();
    }
    // A browser opens a localhost name on ::1 first: the bridge holds the port there too.
    for (const address of ['127.0.0.1', '::1']) {
      const status = await new Promise<number>((resolve, reject) =>
        httpRequest(
          { host: address, port: bridge.port, path: '/', headers: { host: new URL(origin).host } },
          (response) => {
            response.resume();
            resolve(response.statusCode!);
          },
        )
          .on('error', reject)
          .end(),
      );
      expect(status).toBe(200);
    }
  });

  it('refuses a request without the token, or with a wrong one (401)', async () => {
    const without = await call('status', {}, { authorization: '' });
    expect(without.status).toBe(401);
    const wrong = await call('status', {}, { authorization: `Bearer ${almostToken(token)}` });
    expect(wrong.status).toBe(401);
    expect(wrong.body.error.message).toContain('`flowsync ui --open` opens a new window');
  });

  it("refuses a foreign Origin and any Host but this run's name and port (403), even with the token", async () => {
    const foreign = await call('status', {}, { origin: 'https://evil.example' });
    expect(foreign.status).toBe(403);
    const { host, hostname } = new URL(origin);
    const port = bridge.port;
    for (const other of [
      `evil.example:${port}`, // DNS rebinding
      `127.0.0.1:${port}`, // the address of earlier runs, which another user may have served
      `localhost:${port}`,
      `[::1]:${port}`,
      `another.localhost:${port}`,
      `${hostname.slice(1)}:${port}`,
      `x${hostname}:${port}`,
      `${hostname}.:${port}`,
      `${hostname.toUpperCase()}:${port}`,
      `${hostname}:${port + 1}`,
      hostname,
      '',
    ]) {
      const refused = await call('status', {}, { host: other, origin: `http://${other}` });
      expect(refused.status, other).toBe(403);
      expect(refused.body.error.message).toContain('each run of the agent has its own');
    }
    // The page's own origin, on another Host (and the other way round).
    expect((await call('status', {}, { origin: `http://127.0.0.1:${port}` })).status).toBe(403);
    expect((await call('status', {}, { host: `127.0.0.1:${port}`, origin })).status).toBe(403);
    expect((await call('status', {}, { host })).status).toBe(200);
    expect((await call('status')).status).toBe(200);
  });

  it('says no-store on every answer, the page, its files, the API, the event stream and a refusal alike', async () => {
    const staticDir = join(repo.dir, 'renderer');
    mkdirSync(join(staticDir, 'assets'), { recursive: true });
    writeFileSync(join(staticDir, 'index.html'), '<!doctype html><title>flowsync</title>');
    writeFileSync(join(staticDir, 'assets/index-abc.js'), 'console.log(1)');
    const api = createAgentApi(agent);
    const pages = await startBridge({ api, subscribe: statusEvents(agent, api), staticDir });
    const at = new URL(pages.address).origin;
    try {
      for (const [path, init] of [
        ['/', {}],
        ['/assets/index-abc.js', {}],
        ['/assets/none.js', {}],
        ['/api/status', { method: 'POST', body: '{}', headers: { 'content-type': 'application/json' } }],
        ['/api/hello', { method: 'POST', body: '{}', headers: { 'content-type': 'application/json' } }],
      ] as const) {
        const response = await request(`${at}${path}`, init);
        await response.body.dump();
        expect(response.headers['cache-control'], path).toBe('no-store');
      }
      const stream = await request(`${origin}/api/events?token=${token}`);
      stream.body.on('error', () => {});
      expect(stream.headers['cache-control']).toBe('no-store');
      stream.body.destroy();
      // A worker registered by a page of this origin: none of the window's does, and none is served.
      const worker = await request(`${at}/assets/index-abc.js`, { headers: { 'service-worker': 'script' } });
      expect(worker.statusCode).toBe(403);
      await worker.body.dump();
    } finally {
      await pages.close();
    }
  });

  it('serves the page with a strict CSP and no referrer', async () => {
    const page = await request(`${origin}/`);
    expect(page.statusCode).toBe(200);
    expect(page.headers['content-security-policy']).toContain("default-src 'self'");
    expect(page.headers['referrer-policy']).toBe('no-referrer');
    await page.body.dump();
  });

  it('checks every input against the contract: 400 with the issues, and 404 for an unknown method', async () => {
    const bad = await call('addRepository', { path: 7 });
    expect(bad.status).toBe(400);
    expect(bad.body.error).toMatchObject({ code: 'invalid_input', issues: [{ path: ['path'] }] });
    expect((await call('noSuchMethod')).status).toBe(404);
  });

  it('pushes status as server-sent events when a repository changes', async () => {
    const events: AgentEvent[] = [];
    const stream = await request(`${origin}/api/events?token=${token}`, { headers: { origin } });
    expect(stream.headers['content-type']).toContain('text/event-stream');
    stream.body.on('data', (chunk: Buffer) => {
      for (const line of chunk.toString('utf8').split('\n')) {
        if (line.startsWith('data: ')) events.push(JSON.parse(line.slice(6)) as AgentEvent);
      }
    });
    await eventually(() => expect(events.length).toBeGreaterThan(0));
    await call('addRepository', { path: repo.root });
    repo.write('flows/hello/second.yaml', 'second\n');
    await eventually(() =>
      expect(lastStatus(events)?.repositories[0]).toMatchObject({ counts: { files: 2, pending: 0 } }),
    );
    stream.body.destroy();
  });
});

/**
 * Every 500 of the bridge is a bug: its answer names an incident id in the one form, and agent.log has the error
 * under that id. Two ways there: a method that fails (callMethod), and a route outside the AgentApi (the app's
 * error handler).
 */
describe('a bug behind the bridge', () => {
  /** The incident an answer names, after checking it is a 500 of the one form whose error agent.log holds. */
  function expectIncident(reply: { status: number; message: string }, log: string, error: string): string {
    expect(reply.status).toBe(500);
    const incident = /\(incident (\S+)\); the details are in /.exec(reply.message)?.[1];
    expect(incident).toMatch(INCIDENT_ID);
    expect(reply.message).toContain(log);
    const lines = readFileSync(log, 'utf8')
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as { incident?: string; err?: { message: string } });
    expect(lines.find((line) => line.incident === incident)?.err?.message).toContain(error);
    return incident!;
  }

  it('a method that fails answers 500 with an incident id that is in agent.log', async () => {
    const log = join(repo.dir, 'agent.log');
    agentLog(log);
    expect((await call('addRepository', { path: repo.root })).status).toBe(200);
    expect((await call('repositoryDetail', { root: repo.root })).status).toBe(200);
    // The agent's state changed under it (another process, a bad restore): a table it reads is gone.
    const db = new Database(join(repo.dir, 'state.db'));
    db.exec('DROP TABLE rejected_flows');
    db.close();

    const reply = await call('repositoryDetail', { root: repo.root });
    expect(reply.body.error.code).toBe('internal');
    expectIncident({ status: reply.status, message: reply.body.error.message }, log, 'rejected_flows');
  });

  it('a route outside the AgentApi that fails answers the same way, through the error handler', async () => {
    const log = join(repo.dir, 'agent.log');
    agentLog(log);
    // A page file Node will not read whole (over 2 GiB; sparse, so it takes no room on the disk).
    const staticDir = join(repo.dir, 'renderer');
    mkdirSync(staticDir);
    const fd = openSync(join(staticDir, 'huge.js'), 'w');
    ftruncateSync(fd, 3 * 1024 ** 3);
    closeSync(fd);
    const api = createAgentApi(agent);
    const pages = await startBridge({ api, subscribe: statusEvents(agent, api), staticDir });
    try {
      const response = await request(`${new URL(pages.address).origin}/huge.js`);
      const body = (await response.body.json()) as { ok: boolean; error: { code: string; message: string } };
      expect(body).toMatchObject({ ok: false, error: { code: 'internal' } });
      expectIncident({ status: response.statusCode, message: body.error.message }, log, '2 GiB');
    } finally {
      await pages.close();
    }
  });
});

describe("the window's credentials", () => {
  const exchange = (launch: string) =>
    request(`${origin}/api/session`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', origin },
      body: JSON.stringify({ launch }),
    }).then(async (response) => ({
      status: response.statusCode,
      body: (await response.body.json()) as Parsed,
    }));
  const launchToken = () => new URL(bridge.launchUrl()).hash.replace('#token=', '');
  const agentToken = () => new URL(bridge.agentUrl).hash.replace('#token=', '');

  it('trades a launch token for a session once; the second time, and the token itself, are refused', async () => {
    const launch = launchToken();
    const first = await exchange(launch);
    expect(first.status).toBe(200);
    const session = first.body.value.session as string;
    expect((await call('status', {}, { authorization: `Bearer ${session}` })).status).toBe(200);

    const again = await exchange(launch);
    expect(again.status).toBe(401);
    expect(again.body.error.message).toContain('already used');
    expect((await call('status', {}, { authorization: `Bearer ${launch}` })).status).toBe(401);
    // Neither the agent token nor a session is a launch token.
    expect((await exchange(agentToken())).status).toBe(401);
    expect((await exchange(session)).status).toBe(401);
  });

  it('gives new launch addresses to the agent token only, not to a window', async () => {
    const launch = (authorization: string) =>
      request(`${origin}/api/launch`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization, origin },
        body: '{}',
      }).then(async (response) => ({
        status: response.statusCode,
        body: (await response.body.json()) as Parsed,
      }));
    expect((await launch(`Bearer ${token}`)).status).toBe(403);
    const given = await launch(`Bearer ${agentToken()}`);
    expect(given.status).toBe(200);
    expect(given.body.value.url).toMatch(new RegExp(`^${origin}/#token=[\\w-]{32}$`));
    expect(await connectToBridge(bridge.agentUrl).launchUrl()).not.toBe(given.body.value.url);
  });

  it("takes only a window's session in the event stream's query, never the agent token", async () => {
    const stream = async (query: string) => {
      const response = await request(`${origin}/api/events?token=${query}`, { headers: { origin } });
      // An open stream is cut here; undici reports that as an error of the body, which is expected.
      response.body.on('error', () => {});
      response.body.destroy();
      return response.statusCode;
    };
    expect(await stream(token)).toBe(200);
    expect(await stream(agentToken())).toBe(401);
    expect(await stream(launchToken())).toBe(401);
  });
});

describe('closing the bridge', () => {
  it('ends open event streams instead of waiting for the window to go away', async () => {
    const api = createAgentApi(agent);
    const second = await startBridge({ api, subscribe: statusEvents(agent, api) });
    const secondOrigin = new URL(second.address).origin;
    const secondToken = await windowSession(second);
    const stream = await request(`${secondOrigin}/api/events?token=${secondToken}`, {
      headers: { origin: secondOrigin },
    });
    const ended = new Promise<void>((resolve) => {
      stream.body.on('end', () => resolve());
      stream.body.on('error', () => resolve());
      stream.body.resume();
    });
    // With an open stream, close() used to wait forever: Ctrl-C on `npm start` hung while a window was open.
    await second.close();
    await ended;
  });
});

describe("the bridge's private socket (what the CLI reaches the agent through)", () => {
  let folder: string;
  beforeEach(() => {
    folder = mkdtempSync(join(tmpdir(), 'flowsync-socket-'));
  });
  afterEach(() => rmSync(folder, { recursive: true, force: true }));

  it('serves the same routes to the agent token, 0600 in its folder, and is removed at close', async () => {
    const api = createAgentApi(agent);
    const place = privateSocketPlace(folder, 'agent.sock')!;
    const privately = await startBridge({ api, subscribe: statusEvents(agent, api), socket: place });
    expect(privately.socketPath).toBe(join(folder, 'agent.sock'));
    expect(statSync(privately.socketPath!).mode & 0o777).toBe(0o600);
    const client = connectToBridge({ bridge: privately.agentUrl, socket: privately.socketPath });
    expect(await client.call('status', {})).toMatchObject({ serviceUrl: svc.url });
    expect(await client.launchUrl()).toMatch(new RegExp(`^${new URL(privately.address).origin}/#token=`));
    await privately.close();
    expect(existsSync(join(folder, 'agent.sock'))).toBe(false);
  });

  it('is made in a 0700 folder of its own when the data folder is too long for a socket, which goes at close', async () => {
    const deep = join(folder, 'a'.repeat(60), 'b'.repeat(60));
    mkdirSync(deep, { recursive: true, mode: 0o700 });
    const place = privateSocketPlace(deep, 'agent.sock', [undefined, '/tmp'])!;
    expect(Buffer.byteLength(place.path)).toBeLessThanOrEqual(100);
    expect(place.path.startsWith('/tmp/flowsync-')).toBe(true);
    const api = createAgentApi(agent);
    const privately = await startBridge({ api, subscribe: statusEvents(agent, api), socket: place });
    const made = join(place.path, '..');
    expect(statSync(made).mode & 0o777).toBe(0o700);
    expect(
      await connectToBridge({ bridge: privately.agentUrl, socket: privately.socketPath }).call('status', {}),
    ).toMatchObject({ serviceUrl: svc.url });
    await privately.close();
    expect(existsSync(made)).toBe(false);
  });

  it('is not used by a client when its folder lets others in: the window port is', async () => {
    const api = createAgentApi(agent);
    const place = privateSocketPlace(folder, 'agent.sock')!;
    const privately = await startBridge({ api, subscribe: statusEvents(agent, api), socket: place });
    try {
      execFileSync('chmod', ['0755', folder]);
      let seen = 0;
      // The socket answers nothing now: a client that used it would hang or fail.
      const { createServer } = await import('node:net');
      rmSync(privately.socketPath!);
      const trap = createServer(() => seen++).listen(privately.socketPath!);
      const client = connectToBridge({ bridge: privately.agentUrl, socket: privately.socketPath });
      expect(await client.call('status', {})).toMatchObject({ serviceUrl: svc.url });
      expect(seen).toBe(0);
      trap.close();
    } finally {
      await privately.close();
    }
  });
});

describe('the bridge client (what the Electron main process serves IPC with)', () => {
  it('sends a call again when its connection drops, says so, and gives up in a line of its own', async () => {
    const folder = mkdtempSync(join(tmpdir(), 'flowsync-drops-'));
    const api = createAgentApi(agent);
    const privately = await startBridge({
      api,
      subscribe: statusEvents(agent, api),
      socket: privateSocketPlace(folder, 'agent.sock'),
    });
    // In front of the bridge's socket: closes the first `drops` connections as they come, passes the others on.
    const { connect, createServer } = await import('node:net');
    const inFront = (name: string, drops: number) =>
      createServer((socket) => {
        if (drops-- > 0) return socket.destroy();
        const behind = connect(privately.socketPath!);
        socket.pipe(behind).pipe(socket);
        behind.on('error', () => socket.destroy());
        socket.on('error', () => behind.destroy());
      }).listen(join(folder, name));
    const fronts = [inFront('twice.sock', 2), inFront('always.sock', Infinity)];
    try {
      const said: string[] = [];
      const through = (name: string) =>
        connectToBridge(
          { bridge: privately.agentUrl, socket: join(folder, name) },
          { onRetry: (attempt, of) => said.push(`${attempt} of ${of}`) },
        );
      expect(await through('twice.sock').call('status', {})).toMatchObject({ serviceUrl: svc.url });
      expect(said).toEqual(['2 of 4', '3 of 4']);
      said.length = 0;
      const error = await through('always.sock')
        .call('status', {})
        .catch((thrown: unknown) => thrown);
      expect(error).toBeInstanceOf(AgentNotAnswering);
      expect(error).toMatchObject({ code: 'unavailable' });
      expect((error as Error).message).toContain('dropped the connection 4 times in a row');
      expect(said).toEqual(['2 of 4', '3 of 4', '4 of 4']);
      // Nothing listening at all: said at once, not tried again.
      said.length = 0;
      const gone = await through('nothing.sock')
        .call('status', {})
        .catch((thrown: unknown) => thrown);
      expect(gone).toBeInstanceOf(AgentNotAnswering);
      expect((gone as Error).message).toContain('does not answer');
      expect(said).toEqual([]);
    } finally {
      for (const front of fronts) front.close();
      await privately.close();
      rmSync(folder, { recursive: true, force: true });
    }
  });

  it('calls methods, turns refusals into AgentApiErrors, and follows the status stream', async () => {
    const client = connectToBridge(bridge.agentUrl);
    expect(await client.call('status', {})).toMatchObject({ serviceUrl: svc.url, repositories: [] });
    await expect(client.call('addRepository', { path: 7 })).rejects.toMatchObject({ code: 'invalid_input' });
    await expect(client.call('noSuchMethod', {})).rejects.toMatchObject({ code: 'not_found' });
    const events: AgentEvent[] = [];
    const stop = client.subscribe((event) => events.push(event));
    await eventually(() => expect(events.length).toBeGreaterThan(0));
    await client.call('addRepository', { path: repo.root });
    await eventually(() => expect(lastStatus(events)?.repositories).toHaveLength(1));
    stop();
  });
});

describe('AgentApi through the bridge', () => {
  it('adds a repository and shows its counts; pause stops syncing, resume catches up', async () => {
    const added = await call('addRepository', { path: repo.root });
    expect(added.body.value).toMatchObject({
      owner: 'acme',
      name: 'app',
      phase: 'idle',
      counts: { flows: 1, files: 1 },
    });
    expect(serviceTree(svc.read, 'acme', 'app')).toEqual(diskTree(repo.root));

    const paused = await call('pauseRepository', { root: added.body.value.root });
    expect(paused.body.value.phase).toBe('paused');
    repo.write('flows/hello/main.yaml', 'edited while paused\n');
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(serviceTree(svc.read, 'acme', 'app')['flows/hello/main.yaml']).toBe('hello\n');
    await call('resumeRepository', { root: added.body.value.root });
    await eventually(() => expect(serviceTree(svc.read, 'acme', 'app')).toEqual(diskTree(repo.root)));

    expect((await call('removeRepository', { root: added.body.value.root })).body.value).toEqual({
      removed: true,
    });
    expect((await call('status')).body.value.repositories).toEqual([]);
  });

  it('saves the repository config to the file and the service; an invalid one saves nothing', async () => {
    const { root } = (await call('addRepository', { path: repo.root })).body.value;
    const config = {
      artifact_config: { dir: 'dist' },
      background_jobs: [{ name: 'dev', command: 'npm run dev', description: 'dev server' }],
      assistant_config: { model: 'large', permission_mode: 'ask' },
      editor: 'code',
      backend_config: { url: 'http://localhost:3000' },
    };
    const invalid = await call('saveRepoConfig', {
      root,
      config: { ...config, background_jobs: [{ name: 'dev', description: 'no command' }] },
      base: null,
    });
    expect(invalid.status).toBe(400);
    expect(invalid.body.error.issues[0].path).toEqual(['config', 'background_jobs', 0, 'command']);
    expect(existsSync(join(repo.root, '.flowsync/repo-config.json'))).toBe(false);
    expect(svc.read('SELECT owner FROM repo_configs')).toEqual([]);

    const saved = await call('saveRepoConfig', { root, config, base: null });
    expect(saved.status).toBe(200);
    expect(JSON.parse(readFileSync(join(repo.root, '.flowsync/repo-config.json'), 'utf8'))).toEqual(config);
    const [row] = svc.read<{ config: string }>(
      'SELECT config FROM repo_configs WHERE owner = ? AND name = ?',
      'acme',
      'app',
    );
    expect(JSON.parse(row!.config)).toEqual(config);
    expect((await call('getRepoConfig', { root })).body.value).toMatchObject({ exists: true, config });
  });

  it('saves the repository config on the base it loaded: a file changed since is not written over, nor sent', async () => {
    const { root } = (await call('addRepository', { path: repo.root })).body.value;
    const file = join(repo.root, '.flowsync/repo-config.json');
    const onService = () =>
      svc
        .read<{ config: string }>("SELECT config FROM repo_configs WHERE owner = 'acme' AND name = 'app'")
        .map((row) => JSON.parse(row.config) as unknown);
    await call('saveRepoConfig', { root, config: { editor: 'vim' }, base: null });
    const loaded = (await call('getRepoConfig', { root })).body.value;
    expect(loaded.base).toMatch(/^[0-9a-f]{64}$/);

    // A base missing or not one getRepoConfig gives: refused by name, nothing saved.
    const missing = await call('saveRepoConfig', { root, config: { editor: 'code' } });
    expect(missing.status).toBe(400);
    expect(missing.body.error).toMatchObject({ code: 'invalid_input', issues: [{ path: ['base'] }] });
    expect(missing.body.error.message).toContain('the base getRepoConfig gave');
    const malformed = await call('saveRepoConfig', { root, config: { editor: 'code' }, base: 'abc' });
    expect(malformed.status).toBe(400);
    expect(malformed.body.error.message).toContain('Not a base getRepoConfig gave');

    // Edited by hand since it loaded: the save is a conflict with the file, which is left as it is.
    const handEdit = '{ "editor": "vim", "user": "ada" }\n';
    repo.write('.flowsync/repo-config.json', handEdit);
    const stale = await call('saveRepoConfig', { root, config: { editor: 'code' }, base: loaded.base });
    expect(stale.status).toBe(200);
    expect(stale.body.value).toMatchObject({
      record: null,
      conflict: null,
      keptAs: null,
      fileChanged: { text: handEdit, config: { editor: 'vim', user: 'ada' } },
    });
    expect(readFileSync(file, 'utf8')).toBe(handEdit);
    expect(onService()).not.toContainEqual({ editor: 'code' });

    // Take mine, on the base the conflict named: saved and sent, the hand edit kept beside the file first.
    const mine = await call('saveRepoConfig', {
      root,
      config: { editor: 'code' },
      base: stale.body.value.fileChanged.base,
      takeMine: true,
    });
    expect(mine.body.value).toMatchObject({ fileChanged: null, record: { editor: 'code' } });
    expect(readFileSync(join(repo.root, mine.body.value.keptAs), 'utf8')).toBe(handEdit);
    expect(JSON.parse(readFileSync(file, 'utf8'))).toEqual({ editor: 'code' });
    expect(onService()).toEqual([{ editor: 'code' }]);
  });

  it('pushes a hand edit of .flowsync/repo-config.json to the service; an invalid one is reported, not sent', async () => {
    const { root } = (await call('addRepository', { path: repo.root })).body.value;
    const configs = () =>
      svc.read<{ config: string }>(
        'SELECT config FROM repo_configs WHERE owner = ? AND name = ?',
        'acme',
        'app',
      );
    repo.write('.flowsync/repo-config.json', JSON.stringify({ editor: 'vim' }));
    await eventually(() =>
      expect(configs().map((row) => JSON.parse(row.config))).toEqual([{ editor: 'vim' }]),
    );

    repo.write('.flowsync/repo-config.json', JSON.stringify({ editor: 'vim', copy_ignored_files: [''] }));
    await eventually(async () => {
      const view = (await call('status')).body.value.repositories[0];
      expect(view.configProblem).toContain('repo-config.json: copy_ignored_files.0: Cannot be empty');
    });
    expect(configs().map((row) => JSON.parse(row.config))).toEqual([{ editor: 'vim' }]);
    const read = await call('getRepoConfig', { root });
    expect(read.status).toBe(400);

    repo.write('.flowsync/repo-config.json', JSON.stringify({ editor: 'emacs' }));
    await eventually(() =>
      expect(configs().map((row) => JSON.parse(row.config))).toEqual([{ editor: 'emacs' }]),
    );
    expect((await call('status')).body.value.repositories[0].configProblem).toBeNull();
  });

  it('a hand edit over a teammate’s newer config is a conflict, not sent; the disk made equal to theirs settles it', async () => {
    const { root } = (await call('addRepository', { path: repo.root })).body.value;
    const configs = () =>
      svc
        .read<{ config: string }>("SELECT config FROM repo_configs WHERE owner = 'acme' AND name = 'app'")
        .map((row) => JSON.parse(row.config) as unknown);
    const problem = async () =>
      (await call('status')).body.value.repositories[0].configProblem as string | null;
    repo.write('.flowsync/repo-config.json', JSON.stringify({ editor: 'vim' }));
    await eventually(() => expect(configs()).toEqual([{ editor: 'vim' }]));

    // Bob, from another checkout, replaces it; this checkout's next hand edit is not sent over his.
    const bob = createClient({
      baseUrl: svc.url,
      auth: { userToken: svc.tokens.user },
      writer: 'bob@desk:~/src/app',
    });
    await bob.repoConfig.update({ owner: 'acme', name: 'app', editor: 'emacs' });
    await bob.close();
    repo.write('.flowsync/repo-config.json', JSON.stringify({ editor: 'code' }));
    await eventually(async () =>
      expect(await problem()).toMatch(/repo-config\.json changed on the service by bob@desk:~\/src\/app at /),
    );
    expect(configs()).toEqual([{ editor: 'emacs' }]);
    expect((await call('getRepoConfig', { root })).body.value.conflict).toMatchObject({
      config: { editor: 'emacs' },
      writtenBy: 'bob@desk:~/src/app',
    });

    // Made equal to the service's by hand: settled, and nothing sent.
    repo.write('.flowsync/repo-config.json', JSON.stringify({ editor: 'emacs' }, null, 2));
    await eventually(async () => expect(await problem()).toBeNull());
    expect((await call('getRepoConfig', { root })).body.value.conflict).toBeNull();
    expect(configs()).toEqual([{ editor: 'emacs' }]);
  });

  it('refuses JSON nested deeper than 64 levels, in a call (400) and in the config file (reported), naming the field', async () => {
    const { root } = (await call('addRepository', { path: repo.root })).body.value;
    const deep = '['.repeat(20_000) + ']'.repeat(20_000);
    const response = await request(`${origin}/api/saveRepoConfig`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${token}`, origin },
      body: `{"root":${JSON.stringify(root)},"config":{"backend_config":${deep}}}`,
    });
    expect(response.statusCode).toBe(400);
    const reply = (await response.body.json()) as { ok: boolean; error: Parsed };
    expect(reply.error).toMatchObject({
      code: 'invalid_input',
      issues: [{ path: ['config', 'backend_config'] }],
    });
    expect((await call('status')).status).toBe(200);

    repo.write('.flowsync/repo-config.json', `{"editor":"vim","service_config":${deep}}`);
    await eventually(async () => {
      const view = (await call('status')).body.value.repositories[0];
      // 63 in the file: the service gets its fields one level down, inside {"args": …}.
      expect(view.configProblem).toContain('deeper than 63 levels at config.service_config');
    });
  });

  it('searches tasks seeded by webhooks, opens one, and changes its status with the choices of its team', async () => {
    await call('addRepository', { path: repo.root });
    await seedLoginTasks(svc);

    const noKey = await call('searchTasks', { query: 'login' });
    expect(noKey.status).toBe(422);
    expect(noKey.body.error.message).toContain('personal API key');
    const settings = await call('setApiKey', { secret: 'lin_api_bridge_test_key_0001' });
    expect(settings.body.value.apiKey).toBe('lin_…0001');

    const found = await call('searchTasks', { query: 'login', first: 1 });
    expect(found.body.value.nodes).toHaveLength(1);
    const next = await call('searchTasks', {
      query: 'login',
      first: 1,
      after: found.body.value.pageInfo.endCursor,
    });
    expect(next.body.value.nodes).toHaveLength(1);

    const opened = await call('openTask', { taskKey: 'ENG-1' });
    expect(opened.body.value).toMatchObject({
      task: {
        task_key: 'ENG-1',
        repo_remote_url: 'git@github.com:acme/app.git',
        user_email: 'ada@example.com',
      },
      synced: ['ENG-2'],
    });
    const states = await call('workflowStates', { taskKey: 'ENG-1', teamId: 'team-eng' });
    expect(states.body.value.states.map((s: { name: string }) => s.name)).toEqual(['Todo', 'Done']);
    const updated = await call('updateTask', { taskKey: 'ENG-1', status: 'done', recursive: true });
    expect(updated.body.value.updated.sort()).toEqual(['ENG-1', 'ENG-2']);
    const refused = await call('updateTask', { taskKey: 'ENG-1', status: 'Shipped' });
    expect(refused.status).toBe(422);
    expect(refused.body.error.message).toContain('Todo, Done');
  });
});
