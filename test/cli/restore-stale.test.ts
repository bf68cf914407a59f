import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { NO_KEYCHAIN, userEnv, writeAgentConfig } from '../support/agent-process.ts';
import { runFlowsync } from '../support/cli.ts';
import { makeRepo, serviceTree, type TestRepo } from '../support/repo.ts';
import { startServeProcess, type ServeProcess } from '../support/serve-process.ts';
import { readDatabase } from '../support/service.ts';

/**
 * Issue 41: `restore` on a checkout that is behind. Bob restores the version he last synced while the service holds
 * Alice's newer one: the disk then equals his base, so nothing was pending, and "it is sent as your edit" sent
 * nothing while the service kept Alice's version. Now it is a conflict to settle, and the line says so.
 */

let serve: ServeProcess | null = null;
const repos: TestRepo[] = [];

afterEach(async () => {
  await serve?.stop();
  serve = null;
  for (const repo of repos.splice(0)) repo.cleanup();
});

function developer(name: string, files: Record<string, string>, service: ServeProcess) {
  const repo = makeRepo(files);
  repos.push(repo);
  const env = { ...userEnv(join(repo.dir, name), service), ...NO_KEYCHAIN };
  writeAgentConfig(env, [{ path: repo.root, owner: 'acme', name: 'app' }]);
  return { repo, env };
}

describe('restore on a checkout that is behind', () => {
  it('of the version last synced here is a conflict to settle, said, never "sent" when nothing was', async () => {
    const place = makeRepo();
    repos.push(place);
    const db = join(place.dir, 'service.db');
    serve = await startServeProcess(db, join(place.dir, 'service.log'));
    const stored = () => serviceTree(readDatabase(db), 'acme', 'app');
    const files = { 'flows/ci/build.yml': 'build: 1\n' };
    const alice = developer('alice', files, serve);
    const bob = developer('bob', files, serve);
    expect((await runFlowsync(['sync', alice.repo.root], { env: alice.env })).code).toBe(0);
    expect((await runFlowsync(['sync', bob.repo.root], { env: bob.env })).code).toBe(0);
    alice.repo.write('flows/ci/build.yml', 'build: 2\n');
    expect((await runFlowsync(['sync', alice.repo.root], { env: alice.env })).code).toBe(0);
    const [first] = readDatabase(db)<{ version: number }>(
      "SELECT version FROM file_versions WHERE content = 'build: 1\n' ORDER BY version LIMIT 1",
    );

    const file = join(bob.repo.root, 'flows/ci/build.yml');
    // A draft of Bob's, never sent, is on disk: the restore keeps it first, and says where.
    bob.repo.write('flows/ci/build.yml', 'build: draft\n');
    const restored = await runFlowsync(['restore', file, '--version', String(first!.version)], {
      env: bob.env,
    });
    expect(restored.code, restored.stderr).toBe(4);
    expect(restored.stdout).not.toContain('it is sent as your edit');
    expect(restored.stdout).toMatch(
      /version \d+ is on disk; the service holds a newer version \(by .*\): nothing is sent, it is a conflict: `flowsync resolve .*build\.yml --mine` sends this one on top, --theirs takes the service's/,
    );
    expect(restored.stdout).toMatch(/; what was on disk is kept as version \d+ in the service's history\n$/);
    expect(
      readDatabase(db)<{ content: string }>('SELECT content FROM file_versions WHERE conflict_copy = 1'),
    ).toEqual([{ content: 'build: draft\n' }]);
    expect(readFileSync(file, 'utf8')).toBe('build: 1\n');
    expect(stored()['flows/ci/build.yml']).toBe('build: 2\n');
    const listed = await runFlowsync(['conflicts', bob.repo.root], { env: bob.env });
    expect(listed.code).toBe(4);
    expect(listed.stdout).toContain('flows/ci/build.yml');

    // Sent on top, on his word: the service then holds the version he restored, Alice's kept in its history.
    const mine = await runFlowsync(['resolve', file, '--mine'], { env: bob.env });
    expect(mine.code, mine.stderr).toBe(0);
    expect((await runFlowsync(['sync', bob.repo.root], { env: bob.env })).code).toBe(0);
    expect(stored()['flows/ci/build.yml']).toBe('build: 1\n');
  }, 120_000);
});
