import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { KeychainSecretStore } from '../../src/secrets/index.ts';
import { NO_KEYCHAIN, userEnv } from '../support/agent-process.ts';
import { runFlowsync, type CliResult } from '../support/cli.ts';
import { fileEntry } from '../support/flows.ts';
import { startServeProcess, type ServeProcess } from '../support/serve-process.ts';

let dir: string;
let home: string;
let server: ServeProcess;
/** A user's own folders: config and data land here, so the scan below sees everything flowsync wrote. */
let env: NodeJS.ProcessEnv;
const keychain = new KeychainSecretStore();

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'flowsync-cli-'));
  home = join(dir, 'home');
  env = {
    ...userEnv(home),
    XDG_CACHE_HOME: join(home, '.cache'),
    FLOWSYNC_URL: '',
    FLOWSYNC_TOKEN: '',
    FLOWSYNC_ADMIN_TOKEN: '',
    FLOWSYNC_API_KEY: '',
  };
  server = await startServeProcess(join(dir, 'service.db'), join(dir, 'service.log'));
});
afterAll(async () => {
  await server.stop();
  for (const kind of ['access-token', 'admin-token', 'api-key'] as const)
    await keychain.delete(server.url, kind);
  rmSync(dir, { recursive: true, force: true });
});

const flowsync = (args: string[], stdin?: string, extraEnv: NodeJS.ProcessEnv = {}) =>
  runFlowsync(args, { stdin, env: { ...env, ...extraEnv } });

function filesUnder(root: string): string[] {
  return readdirSync(root, { recursive: true, encoding: 'utf8' })
    .map((name) => join(root, name))
    .filter((path) => statSync(path).isFile());
}

function expectOneLine(result: CliResult) {
  expect(result.stderr.trim().split('\n')).toHaveLength(1);
  expect(result.stderr).toMatch(/^flowsync: /);
}

const syncBatchArgs = JSON.stringify({
  repo_owner: 'acme',
  repo_name: 'app',
  flows: [{ flow_path: 'flows/hello', files: [fileEntry('main.yaml', 'steps: []\n')] }],
});

describe('flowsync login, then call, as a new user types it', () => {
  it('login checks the token with the service and keeps it in the keychain, and nowhere else', async () => {
    const login = await flowsync(['login', '--url', server.url], `${server.tokens.user}\n`);
    expect(login.code, login.stderr).toBe(0);
    expect(login.stdout).toContain(`Signed in to ${server.url}: user token fsu_…`);
    expect(login.stdout).not.toContain(server.tokens.user);
    expect(await keychain.get(server.url, 'access-token')).toBe(server.tokens.user);

    const admin = await flowsync(['login', '--admin'], server.tokens.admin);
    expect(admin.code, admin.stderr).toBe(0);
    expect(await keychain.get(server.url, 'admin-token')).toBe(server.tokens.admin);

    // V8's cache of flowsync's own compiled modules (src/host: the compile cache) is code, never a token.
    const cached = filesUnder(home).filter((path) => path.includes('/.cache/flowsync/compile-cache/'));
    for (const path of cached) {
      const bytes = readFileSync(path);
      expect(bytes.includes(server.tokens.user) || bytes.includes(server.tokens.admin), path).toBe(false);
    }
    const written = filesUnder(home).filter((path) => !cached.includes(path));
    expect(written.map((path) => path.slice(home.length))).toEqual(['/.config/flowsync/config.json']);
    expect(JSON.parse(readFileSync(written[0]!, 'utf8'))).toEqual({
      serviceUrl: server.url,
      repositories: [],
    });
    for (const path of [...written, join(dir, 'service.log')]) {
      const text = readFileSync(path, 'utf8');
      expect(text).not.toContain(server.tokens.user);
      expect(text).not.toContain(server.tokens.admin);
    }
  });

  it('call sync_batch prints the value as JSON with the stored token (the URL comes from the config)', async () => {
    const result = await flowsync(['call', 'svc/flow_def/action/sync_batch/run', '--args', syncBatchArgs]);
    expect(result.code, result.stderr).toBe(0);
    expect(JSON.parse(result.stdout)).toMatchObject({ files_created: 1, flows_synced: 1, skipped: false });
    const again = await flowsync(['call', 'svc/flow_def/action/sync_batch/run', '--args', syncBatchArgs]);
    expect(JSON.parse(again.stdout)).toMatchObject({ files_created: 0, skipped: true });
  });

  it('reads args from a file or stdin, uses the admin token for operator functions, --raw prints the envelope', async () => {
    const argsFile = join(dir, 'args.json');
    writeFileSync(
      argsFile,
      '{"team_id":"ENG","states":[{"id":"s1","name":"Todo","normalized_name":"todo"}]}',
    );
    const upsert = await flowsync([
      'call',
      'svc/tracker/private/workflow_state_cache_upsert',
      '--args-file',
      argsFile,
    ]);
    expect(upsert.code, upsert.stderr).toBe(0);
    const read = await flowsync(
      ['call', 'svc/tracker/private/workflow_state_cache_get_by_team', '-', '--raw'],
      '{"team_id":"ENG"}',
    );
    expect(read.code).toBe(0);
    expect(JSON.parse(read.stdout)).toMatchObject({
      status: 'success',
      value: { states: [{ name: 'Todo' }] },
    });
  });

  it('exits 1 when the service refuses, with the envelope under --raw', async () => {
    const refused = await flowsync([
      'call',
      'svc/flow_def/public/update_file',
      '--args',
      '{"fileId":"nope","content":"x"}',
    ]);
    expect(refused.code).toBe(1);
    expectOneLine(refused);
    expect(refused.stderr).toContain('HTTP 422');
    const raw = await flowsync([
      'call',
      'svc/flow_def/public/update_file',
      '--raw',
      '--args',
      '{"fileId":"nope","content":"x"}',
    ]);
    expect(raw.code).toBe(1);
    expect(JSON.parse(raw.stdout)).toMatchObject({ status: 'error', errorData: { reason: 'refused' } });
  });

  it.each([
    ['args that are not JSON', ['--args', '{nope'], 'not valid JSON'],
    ['args that are not an object', ['--args', '[1]'], 'must be a JSON object'],
    ['args that fail the schema', ['--args', '{"fileId":5}'], 'args.fileId'],
    ['two sources of args', ['--args', '{}', '-'], 'one way only'],
  ])('exits 2 on %s, naming the problem, and sends nothing', async (_name, extra, message) => {
    const result = await flowsync(['call', 'svc/flow_def/public/update_file', ...extra]);
    expect(result.code).toBe(2);
    expectOneLine(result);
    expect(result.stderr).toContain(message);
  });

  it('exits 2 for an unknown function and 3 when the service cannot be reached', async () => {
    const unknown = await flowsync(['call', 'svc/no/such']);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toContain('flowsync functions');
    const dead = await flowsync(
      [
        'call',
        'svc/repo_config/public/update',
        '--url',
        'http://127.0.0.1:9',
        '--args',
        '{"owner":"a","name":"b"}',
      ],
      '',
      {
        FLOWSYNC_TOKEN: 'fsu_from_env',
      },
    );
    expect(dead.code).toBe(3);
    expectOneLine(dead);
    expect(dead.stderr).toContain('Cannot reach the service at http://127.0.0.1:9');
    expect(dead.stderr).not.toContain('fsu_from_env');
  });

  it('says bad args in words, the field and what it should be, not zod’s (issue 42 point 6)', async () => {
    const bad = await flowsync([
      'call',
      'svc/repo_config/public/update',
      '--url',
      server.url,
      '--args',
      '{"owner":"acme","name":"app","editor":3,"background_jobs":[{"name":"dev","command":"npm run dev"}]}',
    ]);
    expect(bad.code).toBe(2);
    expectOneLine(bad);
    expect(bad.stderr).toContain('args.editor: must be text (it is a number)');
    expect(bad.stderr).toContain('args.background_jobs.0.description: is missing (text is expected)');
    expect(bad.stderr).not.toMatch(/Invalid input|received undefined|nonoptional/);
  });

  it('a wrong token is refused in one line, exit 1, and nothing is stored', async () => {
    const url = server.url.replace('127.0.0.1', 'localhost');
    const result = await flowsync(['login', '--url', url], 'fsu_not_a_real_token_000000');
    expect(result.code).toBe(1);
    expectOneLine(result);
    expect(result.stderr).toMatch(/^flowsync: http:\/\/localhost:\d+ does not accept this user token: check/);
    // Not the words of the function the check happened to call.
    expect(result.stderr).not.toMatch(/decrypt_aes_gcm|HTTP 401|trace/);
    expect(result.stderr).not.toContain('fsu_not_a_real_token');
    expect(await keychain.get(url, 'access-token')).toBeNull();
  });

  it('logout removes the tokens; the next call says to log in (exit 2)', async () => {
    const logout = await flowsync(['logout']);
    expect(logout.code).toBe(0);
    expect(logout.stdout).toContain('removed access-token, admin-token');
    expect(await keychain.get(server.url, 'access-token')).toBeNull();
    const call = await flowsync(['call', 'svc/flow_def/action/sync_batch/run', '--args', syncBatchArgs]);
    expect(call.code).toBe(2);
    expect(call.stderr).toContain('flowsync login');
  });
});

describe('without a reachable keychain', () => {
  it('login says so in one line with the environment variables to use, and writes no secret anywhere', async () => {
    const result = await flowsync(['login', '--url', server.url], server.tokens.user, NO_KEYCHAIN);
    expect(result.code).toBe(2);
    expectOneLine(result);
    expect(result.stderr).toContain('No OS keychain is reachable');
    expect(result.stderr).toContain('FLOWSYNC_TOKEN');
    for (const path of filesUnder(home)) expect(readFileSync(path, 'utf8')).not.toContain(server.tokens.user);
  });

  it('call works with FLOWSYNC_TOKEN from the environment', async () => {
    const result = await flowsync(
      ['call', 'svc/flow_def/action/sync_batch/run', '--url', server.url, '--args', syncBatchArgs],
      '',
      {
        ...NO_KEYCHAIN,
        FLOWSYNC_TOKEN: server.tokens.user,
      },
    );
    expect(result.code, result.stderr).toBe(0);
    expect(JSON.parse(result.stdout)).toMatchObject({ flows_synced: 1 });
  });
});
