import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { whoWrote, type MemberRef } from '../../src/protocol/index.ts';
import { SQLITE_MIGRATIONS } from '../../src/service/db/migrations.ts';
import { runFlowsync } from '../support/cli.ts';
import { fileEntry, sha256 } from '../support/flows.ts';
import { memberToken } from '../support/members.ts';
import { startServeProcess, type ServeProcess } from '../support/serve-process.ts';
import { callFunction } from '../support/service.ts';

/**
 * A database written before members (issue 48, T7; SQLite): schema 7, a shared user and admin token and a version
 * of a file, opened by today's `flowsync serve`. The same fsu_/fsa_ tokens go on working; the old version says
 * "before members", a new write "shared token"; `member list` marks the shared members; `serve --new-tokens`
 * replaces the shared pair only, a member's token going on.
 */
let dir: string;
let dbPath: string;
let serve: ServeProcess | undefined;
const shared = {
  user: `fsu_${randomBytes(32).toString('base64url')}`,
  admin: `fsa_${randomBytes(32).toString('base64url')}`,
};
const REPO = { repo_owner: 'acme', repo_name: 'app' };

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'flowsync-migration-'));
  dbPath = join(dir, 'service.db');
  // The database as the release before members left it: schema 7, its tokens' digests in access_tokens.
  const old = new Database(dbPath);
  for (const migration of SQLITE_MIGRATIONS.slice(0, 7)) old.exec(migration);
  old.pragma('user_version = 7');
  const at = '2026-11-01T00:00:00.000Z';
  for (const [kind, token] of Object.entries(shared))
    old
      .prepare('INSERT INTO access_tokens (kind, sha256, created_at) VALUES (?, ?, ?)')
      .run(kind, sha256(token), at);
  old.prepare('INSERT INTO repos VALUES (?, ?, ?, ?)').run('r1', 'acme', 'app', at);
  old.prepare('INSERT INTO flows VALUES (?, ?, ?, ?, ?, ?)').run('f1', 'r1', 'flows/ci', 'h', at, at);
  old
    .prepare('INSERT INTO flow_files VALUES (?, ?, ?, ?, ?, ?, ?, ?)')
    .run('a', 'f1', 'a.yml', sha256('a: 1\n'), 'a: 1\n', 5, at, at);
  old
    .prepare(
      `INSERT INTO file_versions (repo_id, flow_path, path, hash, content, size, written_at, written_by, writer_kind)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    )
    .run('r1', 'flows/ci', 'a.yml', sha256('a: 1\n'), 'a: 1\n', 5, at, 'ada@laptop:~/app', 'user');
  old.close();
});
afterAll(async () => {
  await serve?.stop();
  rmSync(dir, { recursive: true, force: true });
});

interface Version {
  version: number;
  written_by: string | null;
  member?: MemberRef | null;
}
const versionsOf = async (token: string) => {
  const reply = await callFunction(
    dir && serve!.url,
    `Bearer ${token}`,
    'svc/flow_def/public/file_versions',
    {
      ...REPO,
      flow_path: 'flows/ci',
      path: 'a.yml',
    },
  );
  expect(reply.statusCode, JSON.stringify(reply.body)).toBe(200);
  return (reply.body.value as { versions: Version[] }).versions;
};

describe('a database from before members', { timeout: 120_000 }, () => {
  it('keeps its shared tokens working, says who wrote each version, and lists the shared members', async () => {
    serve = await startServeProcess(dbPath, join(dir, 'serve.log'));
    // Not a first start: no tokens printed, the old ones in force.
    expect(serve.tokens).toEqual({ user: '', admin: '' });
    const [before] = await versionsOf(shared.user);
    expect(before!.member).toBeNull();
    expect(whoWrote(before!.member, before!.written_by)).toBe('ada@laptop:~/app (before members)');

    const wrote = await callFunction(
      serve.url,
      `Bearer ${shared.user}`,
      'svc/flow_def/action/sync_batch/run',
      {
        ...REPO,
        flows: [
          {
            flow_path: 'flows/ci',
            files: [{ ...fileEntry('a.yml', 'a: 2\n'), base_hash: sha256('a: 1\n') }],
          },
        ],
      },
    );
    expect(wrote.statusCode, JSON.stringify(wrote.body)).toBe(200);
    const versions = await versionsOf(shared.user);
    const newest = versions.reduce((a, b) => (a.version > b.version ? a : b));
    expect(newest.member).toMatchObject({ name: 'shared', shared: true });
    expect(whoWrote(newest.member, null)).toBe('shared token');

    const list = await runFlowsync(['service', 'member', 'list', '--url', serve.url], {
      env: {
        FLOWSYNC_URL: '',
        FLOWSYNC_TOKEN: '',
        FLOWSYNC_ADMIN_TOKEN: shared.admin,
        HOME: join(dir, 'dana'),
      },
    });
    expect(list.code, list.stderr).toBe(0);
    expect(list.stdout).toMatch(/^shared +write +shared +the shared user \(fsu_\) token$/m);
  });

  it('serve --new-tokens replaces the shared pair only: a member token goes on working', async () => {
    const alice = await memberToken(serve!.url, `Admin ${shared.admin}`, 'alice', 'write');
    await serve!.stop();
    serve = await startServeProcess(dbPath, join(dir, 'serve.log'), ['--new-tokens']);
    expect(serve.tokens.user).toMatch(/^fsu_/);
    expect(serve.tokens.user).not.toBe(shared.user);
    const whoami = (token: string) =>
      callFunction(serve!.url, `Bearer ${token}`, 'svc/members/public/whoami', {});
    expect((await whoami(shared.user)).statusCode).toBe(401);
    expect((await whoami(serve.tokens.user)).body.value).toMatchObject({ member: 'shared', shared: true });
    expect((await whoami(alice)).body.value).toMatchObject({ member: 'alice', role: 'write' });
  });
});
