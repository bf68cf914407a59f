import { execFileSync, spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { formatToken, parseToken } from '../../src/protocol/index.ts';
import { KeychainSecretStore } from '../../src/secrets/index.ts';
import { startAgentProcess, userEnv, writeAgentConfig } from '../support/agent-process.ts';
import { FLOWSYNC_BIN, runFlowsync, type CliResult } from '../support/cli.ts';
import { inviteMember, redeemInvite } from '../support/members.ts';
import { startPostgresCluster } from '../support/postgres.ts';
import { eventually, makeRepo, type TestRepo } from '../support/repo.ts';
import { startServeProcess, type ServeProcess } from '../support/serve-process.ts';
import { callFunction, readDatabase } from '../support/service.ts';

/**
 * Tokens are canaries (issue 48, T5): every path a token or an invite takes — a database's first start, member add
 * and invite, `login --invite` from stdin, a redeem, a revoke, wrong tokens and wrong invites, the shared fsu_/fsa_
 * tokens, a renewal, a running agent, `service export` — and then no secret part of any of them is found in the database's
 * files (-wal and -shm too), the service's log, the agent's log, the export, `ps` during `login --invite`, or what
 * the CLI printed beyond the one line that shows a secret once. A real `flowsync serve` on SQLite, the real CLI, a
 * real agent and a real keychain.
 */
let dir: string;
let dbPath: string;
let serveLog: string;
let server: ServeProcess;
let repo: TestRepo;
const keychain = new KeychainSecretStore();
const base = { FLOWSYNC_URL: '', FLOWSYNC_TOKEN: '', FLOWSYNC_ADMIN_TOKEN: '', FLOWSYNC_API_KEY: '' };
/** Every token and invite made or tried in the run. */
const canaries: string[] = [];
/** What the CLI printed, each with the one-time lines that may show a secret taken out. */
const printed: { what: string; text: string }[] = [];
/** `ps` while `login --invite` ran. */
const psSeen: string[] = [];
let exportPath: string;
let agentLog: string;

/** The part of a token that is secret: after `fsm_<id>_`, or after `fsu_`/`fsa_` for a shared token. */
function secretOf(token: string): string {
  return parseToken(token).ok ? token.slice(15) : token.slice(4);
}

/** A made-up secret for a real id, its checksum right: it reaches the service's comparison of digests. */
function wrongSecret(kind: 'member' | 'invite', real: string): string {
  const id = real.slice(4, 14);
  let secret = '';
  while (secret.length < 43)
    secret += Math.random()
      .toString(36)
      .slice(2)
      .replace(/[^0-9a-z]/g, '');
  return formatToken(kind, id, secret.slice(0, 43));
}

/** A CLI run, kept for the final check with `oneTime` (the lines allowed to show a secret once) taken out. */
async function cli(
  what: string,
  env: NodeJS.ProcessEnv,
  args: string[],
  stdin?: string,
  oneTime: RegExp[] = [],
): Promise<CliResult> {
  const result = await runFlowsync(args, { env, stdin });
  let text = `${result.stdout}\n${result.stderr}`;
  for (const line of oneTime) text = text.replace(line, '<one-time line>');
  printed.push({ what, text });
  return result;
}

/** `login --invite` with the invite sent on stdin a moment after the start, `ps` read all along. */
async function loginWatched(env: NodeJS.ProcessEnv, args: string[], invite: string): Promise<CliResult> {
  const child = spawn(process.execPath, [FLOWSYNC_BIN, ...args], {
    env: { ...process.env, ...env },
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString('utf8')));
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
  const done = new Promise<number | null>((resolve) => child.on('close', resolve));
  let running = true;
  void done.then(() => (running = false));
  const watch = (async () => {
    while (running) {
      // Every process, its whole command line: what another local user sees.
      psSeen.push(execFileSync('ps', ['-eww', '-o', 'pid,args'], { encoding: 'utf8' }));
      await sleep(20);
    }
  })();
  await sleep(300);
  child.stdin.end(`${invite}\n`);
  const code = await done;
  await watch;
  return { code, stdout, stderr };
}

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'flowsync-canaries-'));
  dbPath = join(dir, 'service.db');
  serveLog = join(dir, 'serve.log');
  exportPath = join(dir, 'service.jsonl');
  repo = makeRepo({ 'flows/ci/build.yml': 'build: 1\n' });
  server = await startServeProcess(dbPath, serveLog);
  canaries.push(server.tokens.user, server.tokens.admin);
}, 30_000);

afterAll(async () => {
  await server.stop();
  for (const kind of ['access-token', 'admin-token'] as const) await keychain.delete(server.url, kind);
  repo.cleanup();
  rmSync(dir, { recursive: true, force: true });
});

describe('canary tokens through every path', { timeout: 180_000 }, () => {
  it('leave no secret in the database, the logs, the export, ps or the CLI output', async () => {
    const operatorEnv = { ...userEnv(join(dir, 'dana')), ...base, FLOWSYNC_ADMIN_TOKEN: server.tokens.admin };
    const inviteLine = /^ {2}fsi_\S+$/m;

    // Invites: over HTTP, and with --db on the database itself.
    const aliceAdded = await cli(
      'member add alice',
      operatorEnv,
      ['service', 'member', 'add', 'alice', '--role', 'write', '--url', server.url],
      undefined,
      [inviteLine],
    );
    expect(aliceAdded.code, aliceAdded.stderr).toBe(0);
    const aliceInvite = inviteLine.exec(aliceAdded.stdout)![0].trim();
    const bobAdded = await cli(
      'member add bob --db',
      operatorEnv,
      ['service', 'member', 'add', 'bob', '--role', 'operator', '--db', dbPath],
      undefined,
      [inviteLine],
    );
    expect(bobAdded.code, bobAdded.stderr).toBe(0);
    const bobInvite = inviteLine.exec(bobAdded.stdout)![0].trim();
    const secondInvite = await cli(
      'member invite alice',
      operatorEnv,
      ['service', 'member', 'invite', 'alice', '--url', server.url],
      undefined,
      [inviteLine],
    );
    const aliceSecondInvite = inviteLine.exec(secondInvite.stdout)![0].trim();
    canaries.push(aliceInvite, bobInvite, aliceSecondInvite);

    // Wrong invites first (a real id with a wrong secret counts a failure; a token given as an invite), then the
    // real one, from stdin, with `ps` watched.
    const aliceEnv: NodeJS.ProcessEnv = { ...userEnv(join(dir, 'alice')), ...base };
    const wrongInvite = wrongSecret('invite', aliceInvite);
    canaries.push(wrongInvite);
    const refusedInvite = await cli(
      'login with a wrong invite',
      aliceEnv,
      ['login', '--url', server.url, '--invite'],
      wrongInvite,
    );
    expect(refusedInvite.code).not.toBe(0);
    const login = await loginWatched(
      aliceEnv,
      ['login', '--url', server.url, '--invite', '--label', 'laptop'],
      aliceInvite,
    );
    printed.push({ what: 'login --invite', text: `${login.stdout}\n${login.stderr}` });
    expect(login.code, login.stderr).toBe(0);
    const aliceToken = (await keychain.get(server.url, 'access-token'))!;
    expect(aliceToken).toMatch(/^fsm_/);
    canaries.push(aliceToken);
    expect(psSeen.length).toBeGreaterThan(3);

    // Bob, an operator, for CI: the token printed once on stdout (the one-time line), nothing kept.
    const bobEnv = { ...userEnv(join(dir, 'bob')), ...base };
    const bobLogin = await cli(
      'login --invite --print-token',
      bobEnv,
      ['login', '--url', server.url, '--invite', '--print-token', '--label', 'ci'],
      bobInvite,
      [/^fsm_\S+$/m],
    );
    expect(bobLogin.code, bobLogin.stderr).toBe(0);
    const bobToken = bobLogin.stdout.trim();
    canaries.push(bobToken);
    // A member token given where an invite is asked for.
    await cli(
      'login with a token as the invite',
      bobEnv,
      ['login', '--url', server.url, '--invite'],
      bobToken,
    );

    // Redeemed with a call (a second device), then revoked, then used.
    const redeemed = await redeemInvite(server.url, aliceSecondInvite, 'desk');
    expect(redeemed.statusCode).toBe(200);
    const deskToken = (redeemed.body.value as { token: string }).token;
    canaries.push(deskToken);
    // Renewed by its holder, the new one used (which retires the old), then renewed again.
    const renew = (token: string) =>
      callFunction(server.url, `Bearer ${token}`, 'svc/members/public/renew_token', {});
    const renewedOnce = ((await renew(deskToken)).body.value as { token: string }).token;
    expect(renewedOnce).toMatch(/^fsm_/);
    const renewedTwice = ((await renew(renewedOnce)).body.value as { token: string }).token;
    canaries.push(renewedOnce, renewedTwice);
    expect(
      (await callFunction(server.url, `Bearer ${deskToken}`, 'svc/members/public/whoami', {})).statusCode,
    ).toBe(401);
    const revoked = await cli('token revoke', { ...operatorEnv, FLOWSYNC_ADMIN_TOKEN: bobToken }, [
      'service',
      'token',
      'revoke',
      renewedTwice.slice(0, 14),
      '--url',
      server.url,
    ]);
    expect(revoked.code, revoked.stderr).toBe(0);
    const deskEnv = {
      ...userEnv(join(dir, 'desk')),
      ...base,
      FLOWSYNC_URL: server.url,
      FLOWSYNC_TOKEN: renewedTwice,
    };
    expect((await cli('whoami with a revoked token', deskEnv, ['whoami'])).code).toBe(1);

    // Wrong tokens: a real id with a wrong secret, an invite as a token, a write token on the Admin scheme, a shared
    // token with one character changed.
    const wrongToken = wrongSecret('member', aliceToken);
    const wrongShared = `${server.tokens.user.slice(0, -1)}${server.tokens.user.endsWith('A') ? 'B' : 'A'}`;
    canaries.push(wrongToken, wrongShared);
    for (const [what, env] of [
      ['whoami with a wrong secret', { ...deskEnv, FLOWSYNC_TOKEN: wrongToken }],
      ['whoami with an invite', { ...deskEnv, FLOWSYNC_TOKEN: aliceInvite }],
      ['whoami with a changed shared token', { ...deskEnv, FLOWSYNC_TOKEN: wrongShared }],
    ] as const)
      expect((await cli(what, env, ['whoami'])).code).not.toBe(0);
    const adminCall = ['call', 'svc/members/private/list', '--args', '{}'];
    await cli('a write token on Admin', { ...deskEnv, FLOWSYNC_ADMIN_TOKEN: aliceToken }, adminCall);
    for (const token of [wrongToken, aliceInvite, wrongShared, bobToken])
      await callFunction(server.url, `Admin ${token}`, 'svc/members/private/list', {});

    // The shared tokens, as before members.
    const sharedEnv = {
      ...deskEnv,
      FLOWSYNC_TOKEN: server.tokens.user,
      FLOWSYNC_ADMIN_TOKEN: server.tokens.admin,
    };
    expect((await cli('whoami with the shared token', sharedEnv, ['whoami'])).code).toBe(0);
    expect((await cli('member list with the shared admin token', sharedEnv, adminCall)).code).toBe(0);

    // Alice's agent, its token from the keychain, syncs a file.
    const agentEnv: NodeJS.ProcessEnv = { ...aliceEnv, FLOWSYNC_URL: server.url };
    writeAgentConfig(agentEnv, [{ path: repo.root, owner: 'acme', name: 'app' }]);
    agentLog = join(agentEnv.XDG_DATA_HOME!, 'flowsync/agent.log');
    const agent = startAgentProcess(['start', repo.root], agentEnv);
    try {
      await agent.waitFor(/Watching 1 repository/, 60_000);
      await eventually(async () => {
        const flows = await callFunction(
          server.url,
          `Bearer ${aliceToken}`,
          'svc/flow_def/public/list_flows',
          {
            repo_owner: 'acme',
            repo_name: 'app',
          },
        );
        expect(JSON.stringify(flows.body.value)).toContain('flows/ci');
      }, 30_000);
      printed.push({ what: 'the agent', text: agent.output() });
    } finally {
      agent.signal('SIGTERM');
      await agent.exitWithin();
    }

    const exported = await cli('service export', operatorEnv, [
      'service',
      'export',
      '--db',
      dbPath,
      '--out',
      exportPath,
    ]);
    expect(exported.code, exported.stderr).toBe(0);

    // Where each secret could have gone. The database's files are read while the service still has them open (the
    // WAL holds the latest writes until a checkpoint).
    const places: { what: string; text: string }[] = [];
    for (const suffix of ['', '-wal', '-shm'])
      if (existsSync(`${dbPath}${suffix}`))
        places.push({
          what: `service.db${suffix}`,
          text: readFileSync(`${dbPath}${suffix}`).toString('latin1'),
        });
    expect(places.map((place) => place.what)).toContain('service.db-wal');
    places.push(
      { what: 'serve.log', text: readFileSync(serveLog, 'utf8') },
      // The agent's log is written only when it has something to say (an incident): read when it is there.
      { what: 'agent.log', text: existsSync(agentLog) ? readFileSync(agentLog, 'utf8') : '' },
      { what: 'the export', text: readFileSync(exportPath, 'utf8') },
      { what: 'ps during login --invite', text: psSeen.join('\n') },
      ...printed.map((run) => ({ what: `flowsync ${run.what}`, text: run.text })),
    );
    // The service's stdout: the shared tokens' one-time lines only.
    places.push({
      what: "serve's stdout",
      text: server.stdout().replace(/^ {2}(user|admin) token:.*$/gm, '<one-time line>'),
    });
    expect(readFileSync(serveLog, 'utf8')).toMatch(/"msg":"call"/);

    // Any 16 characters of a secret in a row: a token cut short in a log is a leak too.
    expect(leaksOf(canaries, places)).toEqual([]);

    // What the database keeps of each member token is its SHA-256, looked up by its id.
    const rows = readDatabase(dbPath)<{ id: string; sha256: string }>('SELECT id, sha256 FROM member_tokens');
    for (const token of [aliceToken, bobToken, deskToken, renewedOnce, renewedTwice])
      expect(rows).toContainEqual({
        id: token.slice(4, 14),
        sha256: createHash('sha256').update(token).digest('hex'),
      });
  });
});

/** Any 16 characters of a canary's secret in a row, in one of `places`: each a line naming the canary and the place. */
function leaksOf(tokens: string[], places: { what: string; text: string }[]): string[] {
  const leaks: string[] = [];
  for (const canary of tokens) {
    const secret = secretOf(canary);
    const pieces = [0, 16, secret.length - 16].map((at) => secret.slice(at, at + 16));
    for (const place of places)
      if (pieces.some((piece) => place.text.includes(piece)))
        leaks.push(`${canary.slice(0, 14)}… in ${place.what}`);
  }
  return leaks;
}

describe('canary tokens on Postgres', { timeout: 180_000 }, () => {
  it('leave no secret in pg_dump, the export or the service log', async () => {
    const cluster = await startPostgresCluster();
    const log = join(dir, 'serve-pg.log');
    try {
      const url = await cluster.createDatabase();
      const serve = await startServeProcess(url, log);
      const tokens = [serve.tokens.user, serve.tokens.admin];
      try {
        const admin = `Admin ${serve.tokens.admin}`;
        const invite = await inviteMember(serve.url, admin, 'alice', 'write');
        const wrongInvite = wrongSecret('invite', invite);
        expect((await redeemInvite(serve.url, wrongInvite)).statusCode).toBe(401);
        const token = ((await redeemInvite(serve.url, invite)).body.value as { token: string }).token;
        const renewed = (
          (await callFunction(serve.url, `Bearer ${token}`, 'svc/members/public/renew_token', {})).body
            .value as { token: string }
        ).token;
        const wrongToken = wrongSecret('member', renewed);
        for (const used of [renewed, wrongToken, token])
          await callFunction(serve.url, `Bearer ${used}`, 'svc/flow_def/public/list_flows', {
            repo_owner: 'acme',
            repo_name: 'app',
          });
        tokens.push(invite, wrongInvite, token, renewed, wrongToken);
        const out = join(dir, 'pg-export.jsonl');
        const exported = await runFlowsync(['service', 'export', '--db', url, '--out', out]);
        expect(exported.code, exported.stderr).toBe(0);
        const dump = execFileSync('pg_dump', ['--no-owner', url], { encoding: 'utf8', maxBuffer: 64 << 20 });
        expect(dump).toContain('member_tokens');
        expect(
          leaksOf(tokens, [
            { what: 'pg_dump', text: dump },
            { what: 'the export', text: readFileSync(out, 'utf8') },
            { what: 'serve.log', text: readFileSync(log, 'utf8') },
          ]),
        ).toEqual([]);
      } finally {
        await serve.stop();
      }
    } finally {
      cluster.stop();
    }
  });
});
