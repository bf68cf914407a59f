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
import { KeychainSecretStore, embeddedSecrets } from '../../src/secrets/index.ts';

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

describe('tokens an older flowsync filed elsewhere', () => {
  it.each([
    ['under http://127.0.0.1:<port> (before issue 20)', (port: number) => `http://127.0.0.1:${port}`],
    ['under "embedded" (before the name said which database)', () => 'embedded'],
  ])(
    '%s are taken over by the next agent (not replaced), so a sign-in stays valid',
    async (_, legacyName) => {
      const keychain = new KeychainSecretStore();
      const port = await freePort();
      const own: NodeJS.ProcessEnv = {
        ...env,
        ...userEnv(join(dir, `upgrade-${port}`)),
        FLOWSYNC_EMBEDDED_PORT: String(port),
      };
      const filed = embeddedSecrets(serviceDb(own));
      const first = startAgentProcess(['start', join(dir, 'repo')], own);
      await first.waitFor(/Watching 1 repository/, 60_000);
      first.signal('SIGINT');
      expect(await first.exitWithin()).toBe(0);
      // Filed as an older flowsync did, nothing under "embedded:<database>".
      const legacy = legacyName(port);
      const user = (await keychain.get(filed, 'access-token'))!;
      const admin = (await keychain.get(filed, 'admin-token'))!;
      await keychain.set(legacy, 'access-token', user);
      await keychain.set(legacy, 'admin-token', admin);
      await keychain.delete(filed, 'access-token');
      await keychain.delete(filed, 'admin-token');

      const second = startAgentProcess(['start'], own);
      await second.waitFor(/Watching 1 repository/, 60_000);
      expect(second.output()).not.toMatch(/tokens are in the OS keychain/);
      expect(await keychain.get(filed, 'access-token')).toBe(user);
      expect(await keychain.get(filed, 'admin-token')).toBe(admin);
      const call = await runFlowsync(ADMIN_CALL, { env: own });
      expect(call.code, call.stderr).toBe(0);
      second.signal('SIGINT');
      expect(await second.exitWithin()).toBe(0);
      for (const name of [legacy, filed]) {
        await keychain.delete(name, 'access-token');
        await keychain.delete(name, 'admin-token');
      }
    },
    180_000,
  );
});

describe('two data folders under one keychain', () => {
  it('keep their own embedded tokens: neither start signs the other out', async () => {
    // Two users of one keychain in all but their data folders (two XDG_DATA_HOMEs; the suite's test files, side by
    // side on one keyring). Filed under one name, B's start found A's tokens, which B's database refuses, issued
    // new ones over them, and A's next start did the same to B's.
    const keychain = new KeychainSecretStore();
    const a = userEnv(join(dir, 'folder-a'), 'embedded');
    const b = userEnv(join(dir, 'folder-b'), 'embedded');
    const run = async (who: NodeJS.ProcessEnv): Promise<string> => {
      const agent = startAgentProcess(['start', join(dir, 'repo')], who);
      await agent.waitFor(/Watching 1 repository/, 60_000);
      agent.signal('SIGINT');
      expect(await agent.exitWithin()).toBe(0);
      return agent.output();
    };
    const tokenOf = (who: NodeJS.ProcessEnv) => keychain.get(embeddedSecrets(serviceDb(who)), 'access-token');
    expect(await run(a)).toMatch(/tokens are in the OS keychain/);
    const tokenOfA = await tokenOf(a);
    expect(await run(b)).toMatch(/tokens are in the OS keychain/);
    const tokenOfB = await tokenOf(b);
    expect(await run(a)).not.toMatch(/tokens are/);
    expect(await run(b)).not.toMatch(/tokens are/);
    expect([await tokenOf(a), await tokenOf(b)]).toEqual([tokenOfA, tokenOfB]);
    expect(tokenOfA).not.toBe(tokenOfB);
    for (const who of [a, b]) {
      for (const kind of ['access-token', 'admin-token'] as const) {
        await keychain.delete(embeddedSecrets(serviceDb(who)), kind);
      }
    }
  }, 240_000);
});

/** The embedded service's database of the user of `env` (XDG on Linux, as flowsync's paths are). */
function serviceDb(env: NodeJS.ProcessEnv): string {
  return join(env.XDG_DATA_HOME!, 'flowsync', 'service.db');
}

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((ready) => server.listen(0, '127.0.0.1', ready));
  const { port } = server.address() as AddressInfo;
  await new Promise((done) => server.close(done));
  return port;
}
