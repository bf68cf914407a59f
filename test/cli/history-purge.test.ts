import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { NO_KEYCHAIN, userEnv, writeAgentConfig } from '../support/agent-process.ts';
import { runFlowsync } from '../support/cli.ts';
import { startFaultProxy, type FaultProxy } from '../support/fault-proxy.ts';
import { makeRepo, type TestRepo } from '../support/repo.ts';
import { startServeProcess, type ServeProcess } from '../support/serve-process.ts';
import { readDatabase } from '../support/service.ts';

/**
 * Issue 42: a secret created before its .gitignore line reached the service, was deleted, and stayed in the history
 * for 30 days with no way to remove it. `flowsync history` now says a deleted file is still in history and how to
 * purge it; `flowsync history purge` (an operator's command, with the admin token) removes its past versions and
 * leaves a tombstone that says who purged and when. Real processes, a real `flowsync serve` (SQLite).
 */
let serve: ServeProcess | null = null;
let proxy: FaultProxy | null = null;
let repo: TestRepo | null = null;

afterEach(async () => {
  await proxy?.close();
  proxy = null;
  await serve?.stop();
  serve = null;
  repo?.cleanup();
  repo = null;
});

const SECRET = 'AWS_SECRET_ACCESS_KEY=wJalrXUtnFEMI/K7MDENG\n';

/**
 * A repository whose flows/ci/.env (a secret) was synced twice, then deleted and synced; `throughProxy`: the
 * service is reached through a proxy that may answer in its place.
 */
async function secretDeleted(throughProxy = false) {
  repo = makeRepo({ 'flows/ci/build.yml': 'build: 1\n', 'flows/ci/.env': SECRET });
  const tree = repo;
  serve = await startServeProcess(join(tree.dir, 'service.db'), join(tree.dir, 'service.log'));
  if (throughProxy) proxy = await startFaultProxy(serve.url);
  const service = { url: proxy?.url ?? serve.url, tokens: serve.tokens };
  const env = {
    ...userEnv(join(tree.dir, 'home'), service),
    ...NO_KEYCHAIN,
  };
  writeAgentConfig(env, [{ path: tree.root, owner: 'acme', name: 'app' }]);
  const run = (extra: NodeJS.ProcessEnv, ...args: string[]) =>
    runFlowsync(args, { env: { ...env, ...extra }, cwd: tree.root });
  const sync = async () => expect((await run({}, 'sync', '.')).code).toBe(0);
  await sync();
  tree.write('flows/ci/.env', SECRET.replace('ENG', 'ENG2'));
  await sync();
  tree.remove('flows/ci/.env');
  await sync();
  const database = () => readDatabase(join(tree.dir, 'service.db'));
  return { run, database, admin: { FLOWSYNC_ADMIN_TOKEN: serve.tokens.admin } };
}

describe('flowsync history purge', () => {
  it('says a deleted file is still in history, and an operator purges it, leaving a tombstone', async () => {
    const { run, database, admin } = await secretDeleted();
    const before = await run({}, 'history', 'flows/ci/.env');
    expect(before.code, before.stderr).toBe(0);
    expect(before.stdout).toContain(
      "flows/ci/.env is deleted, but 2 versions of its content are still in the service's history " +
        '(until the retention removes them): an operator removes them now with `flowsync history purge flows/ci/.env` (admin token).',
    );

    // A user's token may not purge (a keychain without an admin token): one line, nothing removed.
    const keychain = { DBUS_SESSION_BUS_ADDRESS: process.env.DBUS_SESSION_BUS_ADDRESS };
    const refused = await run(keychain, 'history', 'purge', 'flows/ci/.env');
    expect(refused.code).not.toBe(0);
    expect(refused.stderr.trim().split('\n')).toHaveLength(1);
    expect(refused.stderr).toContain('needs an admin token');
    expect(refused.stderr).toContain('flowsync login --admin');
    expect(database()('SELECT version FROM file_versions WHERE content LIKE ?', '%wJalr%')).toHaveLength(2);

    const purged = await run(admin, 'history', 'purge', 'flows/ci/.env');
    expect(purged.code, purged.stderr).toBe(0);
    expect(purged.stdout).toMatch(
      /^flows\/ci\/\.env: 2 past versions purged from the history by .+ at \d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC\n$/,
    );
    expect(
      database()('SELECT version FROM file_versions WHERE content IS NOT NULL AND path = ?', '.env'),
    ).toEqual([]);
    expect(database()('SELECT version FROM file_versions WHERE content LIKE ?', '%wJalr%')).toEqual([]);

    const after = await run({}, 'history', 'flows/ci/.env');
    expect(after.stdout).toMatch(/^flows\/ci\/\.env: 2 past versions purged from the history by .+ at /);
    expect(after.stdout).toMatch(/deleted .*\(current\)/);
    expect(after.stdout).not.toContain('still in the service');
    // Nothing left to purge: said, and no second tombstone.
    const again = await run(admin, 'history', 'purge', 'flows/ci/.env');
    expect(again.stdout).toBe('flows/ci/.env: no past version to purge; nothing was removed\n');
    expect(database()('SELECT id FROM history_purges')).toHaveLength(1);
  });

  it('purges one version with --version, and refuses the current one in one line', async () => {
    const { run, admin } = await secretDeleted();
    const { versions } = JSON.parse((await run({}, 'history', 'flows/ci/build.yml', '--json')).stdout) as {
      versions: { version: number }[];
    };
    const current = await run(
      admin,
      'history',
      'purge',
      'flows/ci/build.yml',
      '--version',
      String(versions[0]!.version),
    );
    expect(current.code).toBe(1);
    expect(current.stderr).toMatch(/^flowsync: .*is what flows\/ci\/build\.yml holds now: delete the file/);
    expect(current.stderr.trim().split('\n')).toHaveLength(1);
    const bad = await run(admin, 'history', 'purge', 'flows/ci/.env', '--version', 'x');
    expect(bad.code).toBe(2);
    expect(bad.stderr).toBe('flowsync: --version x: give a version number from `flowsync history`.\n');
  });

  it('says so in one line when the service has no purge (an older flowsync serve)', async () => {
    const { run, database, admin } = await secretDeleted(true);
    // The proxy answers purge_history as a service without it does (its 404), everything else as the service.
    proxy!.fault = (path) =>
      path.endsWith('/svc/flow_def/private/purge_history')
        ? {
            status: 404,
            body: JSON.stringify({
              status: 'error',
              errorMessage:
                'No function at svc/flow_def/private/purge_history: run "flowsync functions" to list them.',
              errorData: {},
            }),
          }
        : null;
    const purged = await run(admin, 'history', 'purge', 'flows/ci/.env');
    expect(purged.code).toBe(1);
    expect(purged.stderr).toMatch(/^flowsync: \S+ cannot purge history \(it has no purge_history/);
    expect(purged.stderr.trim().split('\n')).toHaveLength(1);
    expect(database()('SELECT version FROM file_versions WHERE content LIKE ?', '%wJalr%')).toHaveLength(2);
  });
});
