import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { userEnv, writeAgentConfig } from '../support/agent-process.ts';
import { runFlowsync } from '../support/cli.ts';
import { makeRepo, serviceTree, type TestRepo } from '../support/repo.ts';
import { startServeProcess, type ServeProcess } from '../support/serve-process.ts';
import { readDatabase } from '../support/service.ts';

/**
 * Issue 41: who wrote a version is a checkout's own random id, not `user@host:path`. Two machines made from one
 * image (or two containers) share user, host name and folder: here two HOMEs, each with its checkout at `~/repo`,
 * so both carry the same label. Neither may take the other's version for its own: the second edit is a conflict,
 * never written over the first.
 */
const NO_KEYCHAIN = { DBUS_SESSION_BUS_ADDRESS: 'unix:path=/nonexistent/flowsync-no-bus' };

let serve: ServeProcess | null = null;
const repos: TestRepo[] = [];

afterEach(async () => {
  await serve?.stop();
  serve = null;
  for (const repo of repos.splice(0)) repo.cleanup();
});

/** A checkout at `~/repo` of a HOME of its own (the repository's temporary folder): the same label for each. */
function checkoutAtHome(files: Record<string, string>, service: ServeProcess) {
  const repo = makeRepo(files);
  repos.push(repo);
  const env = { ...userEnv(repo.dir, service), ...NO_KEYCHAIN };
  writeAgentConfig(env, [{ path: repo.root, owner: 'acme', name: 'app' }]);
  return { repo, env };
}

describe('two checkouts with one label', () => {
  it('never take each other versions for their own: a conflict, not an overwrite', async () => {
    const files = { 'flows/ci/build.yml': 'build: 1\n' };
    const dir = makeRepo();
    repos.push(dir);
    serve = await startServeProcess(join(dir.dir, 'service.db'), join(dir.dir, 'service.log'));
    const stored = () => serviceTree(readDatabase(join(dir.dir, 'service.db')), 'acme', 'app');
    const writers = () =>
      readDatabase(join(dir.dir, 'service.db'))<{ written_by: string }>(
        'SELECT DISTINCT written_by FROM file_versions ORDER BY written_by',
      ).map((row) => row.written_by);
    const a = checkoutAtHome(files, serve);
    const b = checkoutAtHome(files, serve);

    expect((await runFlowsync(['sync', a.repo.root], { env: a.env })).code).toBe(0);
    // B's first round: the service's version (A's) is not B's own, though it has the same label; the same content
    // is no conflict.
    expect((await runFlowsync(['sync', b.repo.root], { env: b.env })).code).toBe(0);

    a.repo.write('flows/ci/build.yml', 'build: a\n');
    expect((await runFlowsync(['sync', a.repo.root], { env: a.env })).code).toBe(0);
    b.repo.write('flows/ci/build.yml', 'build: b\n');
    const refused = await runFlowsync(['sync', b.repo.root], { env: b.env });
    expect(refused.code, refused.stdout + refused.stderr).toBe(4);
    expect(stored()['flows/ci/build.yml']).toBe('build: a\n');
    const listed = await runFlowsync(['conflicts', b.repo.root], { env: b.env });
    expect(listed.code).toBe(4);
    expect(listed.stdout).toMatch(
      /flows\/ci\/build\.yml: changed on the service by .*~\/repo .*; you changed it/,
    );

    // A third checkout of that label, its state fresh, with another content: A's version is not its own either.
    const c = checkoutAtHome({ 'flows/ci/build.yml': 'build: c\n' }, serve);
    const fresh = await runFlowsync(['sync', c.repo.root], { env: c.env });
    expect(fresh.code, fresh.stdout + fresh.stderr).toBe(4);
    expect(stored()['flows/ci/build.yml']).toBe('build: a\n');

    // The history names each checkout: its label, and its id beside it.
    const names = writers();
    expect(names.length).toBe(1);
    expect(names[0]).toMatch(/^\S+@\S+:~\/repo \(checkout [0-9a-f]{12}\)$/);
  }, 120_000);
});
