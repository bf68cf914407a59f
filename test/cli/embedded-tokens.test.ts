import {
  chmodSync,
  chownSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { createServer, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startAgentProcess, userEnv, type AgentProcess } from '../support/agent-process.ts';
import { runFlowsync } from '../support/cli.ts';
import { eventually } from '../support/repo.ts';
import { createUnixUser, type UnixUser } from '../support/unix-user.ts';
import { EMBEDDED_SECRETS, KeychainSecretStore } from '../../src/secrets/index.ts';

/**
 * Another local user listens on 127.0.0.1:7420, the embedded service's preferred port, before the victim's agent
 * starts: the agent takes another port, and nothing the victim runs may send that listener a token. The listener
 * is a real process of a real second user, writing down every request's headers.
 */
const LISTENER = `
const { appendFileSync } = require('node:fs');
const server = require('node:http').createServer((request, response) => {
  appendFileSync(process.argv[2], JSON.stringify({ url: request.url, headers: request.headers }) + '\\n');
  request.resume();
  request.on('end', () => {
    response.writeHead(200, { 'content-type': 'application/json' });
    response.end(JSON.stringify({ status: 'success', value: null }));
  });
});
server.listen(7420, '127.0.0.1', () => appendFileSync(process.argv[2], 'listening\\n'));
`;

const ADMIN_CALL = [
  'call',
  'svc/tracker/private/workflow_state_cache_get_by_team',
  '--args',
  '{"team_id":"ENG"}',
];
const USER_CALL = [
  'call',
  'svc/flow_def/action/sync_batch/run',
  '--args',
  '{"repo_owner":"acme","repo_name":"app","flows":[]}',
];

let attacker: UnixUser;
let dir: string;
let heard: string;
let env: NodeJS.ProcessEnv;
let agent: AgentProcess | undefined;

beforeAll(async () => {
  attacker = createUnixUser();
  dir = mkdtempSync(join(tmpdir(), 'flowsync-listener-'));
  chmodSync(dir, 0o755);
  const listenerDir = join(dir, 'attacker');
  writeFileSync(join(dir, 'listener.cjs'), LISTENER, { mode: 0o644 });
  mkdirSync(listenerDir, { mode: 0o700 });
  chownSync(listenerDir, attacker.uid, attacker.uid);
  heard = join(listenerDir, 'heard.log');
  attacker.start(process.execPath, [join(dir, 'listener.cjs'), heard]);
  // The attacker's folder is the attacker's; root (the test) reads it only to see what the listener heard.
  await eventually(
    () => expect(existsSync(heard) && readFileSync(heard, 'utf8')).toContain('listening'),
    20_000,
  );
  const repo = join(dir, 'repo');
  // The embedded service on its preferred port, the one the listener holds.
  env = { ...userEnv(join(dir, 'home'), 'embedded'), FLOWSYNC_EMBEDDED_PORT: '' };
  mkdirSync(join(repo, 'flows/hello'), { recursive: true });
  writeFileSync(join(repo, 'flows/hello/main.yaml'), 'steps: []\n');
});

afterAll(async () => {
  if (agent) {
    agent.signal('SIGINT');
    await agent.exitWithin();
  }
  await attacker?.remove();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

/** Everything the listener received: no Authorization header, no token, ever. */
function expectNothingHeard(): void {
  const log = readFileSync(heard, 'utf8');
  expect(log).not.toMatch(/authorization/i);
  expect(log).not.toMatch(/Bearer|Admin|fs[ua]_/);
}

describe("another user's listener on the embedded service's preferred port", () => {
  it("while an agent runs: call (user and admin token) reaches the agent's own service, the listener hears no token", async () => {
    agent = startAgentProcess(['start', join(dir, 'repo')], env);
    await agent.waitFor(/Watching 1 repository/, 60_000);
    const serviceUrl = /syncing with (http:\/\/127\.0\.0\.1:\d+) \(the embedded service\)/.exec(
      agent.output(),
    )?.[1];
    expect(serviceUrl).toBeDefined();
    expect(serviceUrl).not.toBe('http://127.0.0.1:7420');

    const admin = await runFlowsync(ADMIN_CALL, { env });
    const user = await runFlowsync(USER_CALL, { env });
    const status = await runFlowsync(['status'], { env });
    expectNothingHeard();
    expect(admin.stderr).toBe('');
    expect(JSON.parse(admin.stdout)).toMatchObject({ team_id: 'ENG' });
    expect(admin.code).toBe(0);
    expect(user.stderr).toBe('');
    expect(JSON.parse(user.stdout)).toMatchObject({ repo_id: expect.any(String) });
    expect(user.code).toBe(0);
    expect(status.stdout).toContain('Agent: running');
    expect(status.code).toBe(0);
  }, 120_000);

  it('names the embedded tokens so that no URL reads them: --url of the listener sends no token', async () => {
    const named = await runFlowsync([...ADMIN_CALL, '--url', 'http://127.0.0.1:7420'], { env });
    expect(named.code).not.toBe(0);
    expectNothingHeard();
  });

  it('with no agent running: call sends no token to the listener, and says so in one line', async () => {
    agent!.signal('SIGINT');
    expect(await agent!.exitWithin()).toBe(0);
    agent = undefined;
    for (const args of [ADMIN_CALL, USER_CALL]) {
      const call = await runFlowsync(args, { env });
      expect(call.code).not.toBe(0);
      expect(call.stderr.trim().split('\n')).toHaveLength(1);
    }
    expectNothingHeard();
  });

  it("refuses to send any token to another user's listener, even one the user gave (FLOWSYNC_TOKEN, login)", async () => {
    const secrets = { FLOWSYNC_TOKEN: 'fsu_given', FLOWSYNC_ADMIN_TOKEN: 'fsa_given' };
    for (const args of [ADMIN_CALL, USER_CALL, [...USER_CALL, '--url', 'http://localhost:7420']]) {
      const call = await runFlowsync(args, { env: { ...env, ...secrets } });
      expect(call.stderr).toMatch(/^flowsync: .*another user \(uid \d+\).*\n$/);
      expect(call.code).toBe(3);
    }
    const login = await runFlowsync(['login'], { env, stdin: 'fsu_typed\n' });
    expect(login.stderr).toMatch(/another user/);
    expect(login.code).toBe(3);
    expectNothingHeard();
  });
});

describe('tokens an older flowsync filed under http://127.0.0.1:<port>', () => {
  it('are taken over by the next agent (filed under "embedded", not replaced), so a sign-in stays valid', async () => {
    const keychain = new KeychainSecretStore();
    const port = await freePort();
    const own: NodeJS.ProcessEnv = {
      ...env,
      ...userEnv(join(dir, 'upgrade')),
      FLOWSYNC_EMBEDDED_PORT: String(port),
    };
    const first = startAgentProcess(['start', join(dir, 'repo')], own);
    await first.waitFor(/Watching 1 repository/, 60_000);
    first.signal('SIGINT');
    expect(await first.exitWithin()).toBe(0);
    // Filed as before issue 20: under the preferred address, nothing under "embedded".
    const legacy = `http://127.0.0.1:${port}`;
    const user = (await keychain.get(EMBEDDED_SECRETS, 'access-token'))!;
    const admin = (await keychain.get(EMBEDDED_SECRETS, 'admin-token'))!;
    await keychain.set(legacy, 'access-token', user);
    await keychain.set(legacy, 'admin-token', admin);
    await keychain.delete(EMBEDDED_SECRETS, 'access-token');
    await keychain.delete(EMBEDDED_SECRETS, 'admin-token');

    const second = startAgentProcess(['start'], own);
    await second.waitFor(/Watching 1 repository/, 60_000);
    expect(second.output()).not.toMatch(/tokens are in the OS keychain/);
    expect(await keychain.get(EMBEDDED_SECRETS, 'access-token')).toBe(user);
    expect(await keychain.get(EMBEDDED_SECRETS, 'admin-token')).toBe(admin);
    const call = await runFlowsync(ADMIN_CALL, { env: own });
    expect(call.code, call.stderr).toBe(0);
    second.signal('SIGINT');
    expect(await second.exitWithin()).toBe(0);
    await keychain.delete(legacy, 'access-token');
    await keychain.delete(legacy, 'admin-token');
  }, 180_000);
});

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((ready) => server.listen(0, '127.0.0.1', ready));
  const { port } = server.address() as AddressInfo;
  await new Promise((done) => server.close(done));
  return port;
}
