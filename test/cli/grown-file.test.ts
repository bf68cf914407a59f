import { statSync, truncateSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { NO_KEYCHAIN, userEnv, writeAgentConfig } from '../support/agent-process.ts';
import { runFlowsync } from '../support/cli.ts';
import { makeRepo, serviceTree, type TestRepo } from '../support/repo.ts';
import { startServeProcess, type ServeProcess } from '../support/serve-process.ts';
import { readDatabase } from '../support/service.ts';

/**
 * Issue 36, from the command line against a `flowsync serve` process: files grown over 1 MiB are not deletions.
 * Before, `flowsync sync` sent the deletion of one such file (the teammates' copy gone), and 120 of them were
 * "held deletions" (exit 4) that `resolve --held --theirs` did not put back.
 */
let serve: ServeProcess | null = null;
let repo: TestRepo | null = null;

afterEach(async () => {
  await serve?.stop();
  serve = null;
  repo?.cleanup();
  repo = null;
});

describe('files grown over 1 MiB, then flowsync sync and status', () => {
  it('leaves the service as it was, holds no deletion, and says why each is not sent', async () => {
    const files: Record<string, string> = { 'flows/ci/build.yml': 'build: 1\n' };
    for (let i = 0; i < 120; i++) files[`flows/gen/step-${i}.yml`] = `step: ${i}\n`;
    repo = makeRepo(files);
    const tree = repo;
    const dbPath = join(tree.dir, 'service.db');
    serve = await startServeProcess(dbPath, join(tree.dir, 'service.log'));
    const env = {
      ...userEnv(join(tree.dir, 'home'), serve),
      ...NO_KEYCHAIN,
    };
    writeAgentConfig(env, [{ path: tree.root, owner: 'acme', name: 'app' }]);
    const stored = () => serviceTree(readDatabase(dbPath), 'acme', 'app');
    const deletions = () =>
      readDatabase(dbPath)<{ n: number }>('SELECT count(*) AS n FROM file_versions WHERE hash IS NULL')[0]!.n;
    const run = (...args: string[]) => runFlowsync(args, { env, cwd: tree.root });

    expect((await run('sync', '.')).code).toBe(0);
    tree.write('flows/ci/build.yml', 'x'.repeat(2 * 1024 * 1024));
    // Sparse: 2 MiB each as the agent sees them, without writing 240 MB on a shared disk.
    for (let i = 0; i < 120; i++) truncateSync(join(tree.root, `flows/gen/step-${i}.yml`), 2 * 1024 * 1024);

    const synced = await run('sync', '.');
    expect(synced.code, synced.stdout + synced.stderr).toBe(0);
    expect(synced.stdout + synced.stderr).not.toMatch(/held/);
    expect(stored()).toEqual(files);
    expect(deletions()).toBe(0);

    const status = await run('status');
    expect(status.code, status.stderr).toBe(0);
    expect(status.stdout).toContain('pending not known, 121 not sent');
    expect(status.stdout).toContain('not sent: flows/ci/build.yml: over 1 MiB: add it to .gitignore');
    expect(status.stdout).not.toMatch(/held/);

    // Nothing to put back: the service's copies are not deletions waiting, and the files on disk stay as they are.
    const theirs = await run('resolve', '--held', '--theirs');
    expect(theirs.code, theirs.stderr).toBe(0);
    expect(theirs.stdout).toContain('0 files put back on disk');
    expect(statSync(join(tree.root, 'flows/ci/build.yml')).size).toBe(2 * 1024 * 1024);
    expect(stored()).toEqual(files);
    expect(deletions()).toBe(0);
  }, 120_000);
});
