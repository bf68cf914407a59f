import { mkdtempSync, readFileSync, readdirSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import Database from 'better-sqlite3';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { KeychainSecretStore } from '../../src/secrets/index.ts';
import { userEnv } from '../support/agent-process.ts';
import { runFlowsync } from '../support/cli.ts';
import { fileEntry } from '../support/flows.ts';
import { startServeProcess, type ServeProcess } from '../support/serve-process.ts';
import { callFunction, readDatabase } from '../support/service.ts';

/**
 * A team's members as people type it (issue 48): a real `flowsync serve` on SQLite, the real CLI, a real keychain.
 * The operator adds members over HTTP with their token, or with --db on the database itself; each member redeems
 * their invite with `flowsync login --invite` from stdin, and the service names them from their token.
 * One keychain serves the whole run: the operator's token comes from FLOWSYNC_ADMIN_TOKEN, alice's lives in the
 * keychain, bob's (CI) in FLOWSYNC_TOKEN, so that no two people share a keychain entry.
 */
let dir: string;
let server: ServeProcess;
let dbPath: string;
const keychain = new KeychainSecretStore();
const base = { FLOWSYNC_URL: '', FLOWSYNC_TOKEN: '', FLOWSYNC_ADMIN_TOKEN: '', FLOWSYNC_API_KEY: '' };
let operatorEnv: NodeJS.ProcessEnv;
let aliceEnv: NodeJS.ProcessEnv;
const invites: Record<string, string> = {};

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'flowsync-members-'));
  dbPath = join(dir, 'service.db');
  server = await startServeProcess(dbPath, join(dir, 'service.log'));
  operatorEnv = { ...userEnv(join(dir, 'dana')), ...base, FLOWSYNC_ADMIN_TOKEN: server.tokens.admin };
  aliceEnv = { ...userEnv(join(dir, 'alice')), ...base };
});
afterAll(async () => {
  await server.stop();
  for (const kind of ['access-token', 'admin-token'] as const) await keychain.delete(server.url, kind);
  rmSync(dir, { recursive: true, force: true });
});

const flowsync = (env: NodeJS.ProcessEnv, args: string[], stdin?: string) =>
  runFlowsync(args, { env, stdin });
const inviteIn = (stdout: string) => /^ {2}(fsi_\S+)$/m.exec(stdout)?.[1] ?? '';

describe('flowsync service member, login --invite, whoami', () => {
  it('an operator adds alice over HTTP; she redeems the invite from stdin; the keychain alone holds her token', async () => {
    const added = await flowsync(operatorEnv, [
      'service',
      'member',
      'add',
      'alice',
      '--role',
      'write',
      '--url',
      server.url,
    ]);
    expect(added.code, added.stderr).toBe(0);
    invites.alice = inviteIn(added.stdout);
    expect(invites.alice).toMatch(/^fsi_/);
    expect(added.stdout).toContain(`alice is invited (write). Send them this invite; it works once, until`);
    expect(added.stdout).toContain(`They run \`flowsync login --url ${server.url} --invite\``);
    expect(added.stdout).not.toContain('fsm_');

    const login = await flowsync(
      aliceEnv,
      ['login', '--url', server.url, '--invite', '--label', 'laptop'],
      `${invites.alice}\n`,
    );
    expect(login.code, login.stderr).toBe(0);
    expect(login.stdout).toMatch(
      new RegExp(
        `^You are alice \\(write\\) on ${server.url}\\. Token fsm_[0-9A-Za-z]{10}… \\("laptop"\\) is in the OS keychain`,
      ),
    );
    const token = (await keychain.get(server.url, 'access-token'))!;
    expect(token).toMatch(/^fsm_/);
    expect(login.stdout + login.stderr).not.toContain(token.slice(15));
    expect(await keychain.get(server.url, 'admin-token')).toBeNull();
    // Nowhere on disk: not in her HOME, not in the service's database or log.
    const home = aliceEnv.HOME!;
    for (const file of readdirSync(home, { recursive: true, encoding: 'utf8' }).map((name) =>
      join(home, name),
    ))
      if (statSync(file).isFile()) expect(readFileSync(file, 'utf8')).not.toContain(token.slice(15));
    for (const file of readdirSync(dir).filter((name) => name.startsWith('service.')))
      expect(readFileSync(join(dir, file)).toString('latin1')).not.toContain(token.slice(15));

    const whoami = await flowsync(aliceEnv, ['whoami']);
    expect(whoami.code, whoami.stderr).toBe(0);
    expect(whoami.stdout).toMatch(
      new RegExp(
        `^alice \\(write\\) on ${server.url} · token fsm_[0-9A-Za-z]{10}… "laptop" · expires \\d{4}-\\d\\d-\\d\\d\\n$`,
      ),
    );
  });

  it('the invite works once: a second login says when it was used', async () => {
    const again = await flowsync(
      { ...userEnv(join(dir, 'mallory')), ...base },
      ['login', '--url', server.url, '--invite'],
      invites.alice,
    );
    expect(again.code).toBe(1);
    expect(again.stderr).toMatch(/^flowsync: This invite was already used, at \d{4}-.*: it works once/);
  });

  it('a paste cut short is refused at once, with no call', async () => {
    const cut = await flowsync(
      aliceEnv,
      ['login', '--url', server.url, '--invite'],
      invites.alice!.slice(0, 50),
    );
    expect(cut.code).toBe(2);
    expect(cut.stderr).toBe(
      'flowsync: That is not a whole flowsync invite: it has 50 characters of 64 (was it cut short when copied?).\n',
    );
  });

  it('with --db on the database itself (the service running): bob, read-only, for CI with --print-token', async () => {
    const added = await flowsync(operatorEnv, [
      'service',
      'member',
      'add',
      'bob',
      '--role',
      'read',
      '--db',
      dbPath,
    ]);
    expect(added.code, added.stderr).toBe(0);
    expect(added.stdout).toContain('They run `flowsync login --url <the service address> --invite`');
    const created = readDatabase(dbPath)<{ created_by: string }>(
      "SELECT created_by FROM members WHERE name = 'bob'",
    );
    expect(created[0]!.created_by).toMatch(/^local:.+@.+/);

    const bobHome = { ...userEnv(join(dir, 'bob')), ...base };
    const ci = await flowsync(
      bobHome,
      ['login', '--url', server.url, '--invite', '--print-token', '--label', 'ci'],
      inviteIn(added.stdout),
    );
    expect(ci.code, ci.stderr).toBe(0);
    const token = ci.stdout.trim();
    expect(token).toMatch(/^fsm_[0-9A-Za-z]{10}_[0-9A-Za-z]{49}$/);
    expect(ci.stderr).toMatch(/^You are bob \(read\) on .*printed once above and kept nowhere/);
    const bobEnv = { ...bobHome, FLOWSYNC_TOKEN: token, FLOWSYNC_URL: server.url };
    expect((await flowsync(bobEnv, ['whoami'])).stdout).toContain('bob (read) on');

    // A read-only member's write: the service's sentence, exit 1, never "sign in".
    const args = JSON.stringify({
      repo_owner: 'acme',
      repo_name: 'app',
      flows: [{ flow_path: 'flows/ci', files: [fileEntry('x.yml', 'x: 1\n')] }],
    });
    const write = await flowsync(bobEnv, ['call', 'svc/flow_def/action/sync_batch/run', '--args', args]);
    expect(write.code).toBe(1);
    expect(write.stderr).toContain(
      'bob is a read-only member of this service: svc/flow_def/action/sync_batch/run writes. Ask an operator for write access (`flowsync service member role bob write`).',
    );
    expect(write.stderr).not.toMatch(/sign in|login/);
    const read = await flowsync(bobEnv, [
      'call',
      'svc/flow_def/public/list_flows',
      '--args',
      '{"repo_owner":"acme","repo_name":"app"}',
    ]);
    expect(read.code, read.stderr).toBe(0);
  });

  it('member list shows each member, their tokens by id, and the shared tokens', async () => {
    const list = await flowsync(operatorEnv, ['service', 'member', 'list', '--url', server.url]);
    expect(list.code, list.stderr).toBe(0);
    expect(list.stdout).toMatch(/^alice +write +active +1 token$/m);
    expect(list.stdout).toMatch(/^ +fsm_[0-9A-Za-z]{10}… "laptop" expires \d{4}-/m);
    expect(list.stdout).toMatch(/^bob +read +active +1 token$/m);
    expect(list.stdout).toMatch(/^shared +write +shared +the shared user \(fsu_\) token$/m);
    expect(list.stdout).not.toMatch(/fsm_[0-9A-Za-z]{10}_/);
    // The same through --db.
    const local = await flowsync(operatorEnv, ['service', 'member', 'list', '--db', dbPath, '--json']);
    expect(JSON.parse(local.stdout).members.map((m: { name: string }) => m.name)).toEqual([
      'alice',
      'bob',
      'shared',
      'shared-operator',
    ]);
  });

  it('a role change, a token revoked and a member removed take effect at the next call', async () => {
    const role = await flowsync(operatorEnv, [
      'service',
      'member',
      'role',
      'alice',
      'read',
      '--url',
      server.url,
    ]);
    expect(role.stdout).toBe('alice is now read (was write).\n');
    expect((await flowsync(aliceEnv, ['whoami'])).stdout).toMatch(/^alice \(read\)/);

    const token = (await keychain.get(server.url, 'access-token'))!;
    const revoked = await flowsync(operatorEnv, [
      'service',
      'token',
      'revoke',
      token.slice(0, 14),
      '--url',
      server.url,
    ]);
    expect(revoked.code, revoked.stderr).toBe(0);
    expect(revoked.stdout).toBe(
      `${token.slice(0, 14)}… of alice revoked: every service process refuses it within 1 s.\n`,
    );
    const refused = await flowsync(aliceEnv, ['whoami']);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(
      /Your token fsm_[0-9A-Za-z]{10}… was revoked at .*flowsync login --invite/,
    );

    const removed = await flowsync(operatorEnv, [
      'service',
      'member',
      'remove',
      'alice',
      '--url',
      server.url,
    ]);
    expect(removed.stdout).toBe(
      'alice removed: 0 tokens revoked; every service process refuses them within 1 s.\n',
    );
    const gone = await callFunction(server.url, `Bearer ${token}`, 'svc/members/public/whoami', {});
    expect(gone.body.errorData).toMatchObject({ credential: 'removed' });
  });

  it("a member who writes cannot manage members: the service's sentence, exit 1", async () => {
    const added = await flowsync(operatorEnv, [
      'service',
      'member',
      'add',
      'carol',
      '--role',
      'write',
      '--url',
      server.url,
    ]);
    const carolHome = { ...userEnv(join(dir, 'carol')), ...base };
    const ci = await flowsync(
      carolHome,
      ['login', '--url', server.url, '--invite', '--print-token'],
      inviteIn(added.stdout),
    );
    const carol = { ...carolHome, FLOWSYNC_ADMIN_TOKEN: ci.stdout.trim() };
    const tried = await flowsync(carol, [
      'service',
      'member',
      'add',
      'eve',
      '--role',
      'operator',
      '--url',
      server.url,
    ]);
    expect(tried.code).toBe(1);
    expect(tried.stderr).toContain(
      'carol is not an operator of this service (write): svc/members/private/add is for operators.',
    );
  });

  it('service audit lists who did what; --verify checks the chain and names a row changed under it', async () => {
    const listed = await flowsync(operatorEnv, ['service', 'audit', '--url', server.url]);
    expect(listed.code, listed.stderr).toBe(0);
    expect(listed.stdout).toMatch(
      /^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d {2}shared-operator \(operator\) +member_added +alice {2}\{"role":"write"/m,
    );
    expect(listed.stdout).toMatch(/ \(local\) +member_added +bob /);
    expect(listed.stdout).toMatch(/alice \(read\) +invite_redeemed +alice/);
    expect(listed.stdout).toMatch(/member_removed +alice/);

    const verified = await flowsync(operatorEnv, ['service', 'audit', '--verify', '--db', dbPath]);
    expect(verified.code, verified.stderr).toBe(0);
    expect(verified.stdout).toMatch(/The audit log verifies: \d+ rows, each linked to the one before\.\n$/);

    const db = new Database(dbPath);
    try {
      db.prepare("UPDATE audit_events SET target = 'mallory' WHERE action = 'member_removed'").run();
    } finally {
      db.close();
    }
    const { id } = readDatabase(dbPath)<{ id: number }>(
      "SELECT id FROM audit_events WHERE target = 'mallory'",
    )[0]!;
    const tampered = await flowsync(operatorEnv, ['service', 'audit', '--verify', '--db', dbPath]);
    expect(tampered.code).toBe(1);
    expect(tampered.stderr).toBe(
      `flowsync: the audit log does not verify at row ${id}: its fields do not match its hash (the row was changed).\n`,
    );
  });
});
