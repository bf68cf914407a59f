import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import {
  NO_KEYCHAIN,
  startAgentProcess,
  userEnv,
  writeAgentConfig,
  type AgentProcess,
} from '../support/agent-process.ts';
import { runFlowsync } from '../support/cli.ts';
import { eventually, makeRepo, serviceTree, type TestRepo } from '../support/repo.ts';
import { startServeProcess, type ServeProcess } from '../support/serve-process.ts';
import { readDatabase } from '../support/service.ts';

/**
 * Issue 41: "take the service's version" destroyed an unsent edit, with no copy anywhere. Now, before the service's
 * bytes are written over it, the edit is kept in the service's history as this checkout's conflict copy, and the
 * command's line says which version it is: `flowsync history` lists it, `flowsync restore` brings it back.
 */

let serve: ServeProcess | null = null;
let alice: AgentProcess | null = null;
const repos: TestRepo[] = [];

afterEach(async () => {
  alice?.signal('SIGINT');
  await alice?.exitWithin(10_000);
  alice = null;
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

describe("taking the service's version", () => {
  it('keeps the unsent edit as a conflict copy in the history first, says which version, and it can be restored', async () => {
    const place = makeRepo();
    repos.push(place);
    const db = join(place.dir, 'service.db');
    serve = await startServeProcess(db, join(place.dir, 'service.log'));
    const stored = () => serviceTree(readDatabase(db), 'acme', 'app');
    const files = { 'flows/ci/build.yml': 'build: 1\n' };
    const a = developer('alice', files, serve);
    const b = developer('bob', files, serve);
    alice = startAgentProcess(['start', a.repo.root], a.env);
    await alice.waitFor(/Watching 1 repository/, 60_000);
    expect((await runFlowsync(['sync', b.repo.root], { env: b.env })).code).toBe(0);

    b.repo.write('flows/ci/build.yml', 'build: bob\n');
    expect((await runFlowsync(['sync', b.repo.root], { env: b.env })).code).toBe(0);
    a.repo.write('flows/ci/build.yml', 'build: alice\n');
    await alice.waitFor(/conflict flows\/ci\/build\.yml: changed on the service by /);

    // Through her running agent: the service's version on disk, hers kept first, and the line says where.
    const file = join(a.repo.root, 'flows/ci/build.yml');
    const taken = await runFlowsync(['resolve', file, '--theirs'], { env: a.env });
    expect(taken.code, taken.stderr).toBe(0);
    const said =
      /flows\/ci\/build\.yml: the service's version is on disk; yours is kept as version (\d+) in the service's history/.exec(
        taken.stdout,
      );
    expect(said, taken.stdout).not.toBeNull();
    expect(readFileSync(file, 'utf8')).toBe('build: bob\n');
    const copies = readDatabase(db)<{ version: number; content: string; replaced_at: string | null }>(
      'SELECT version, content, replaced_at FROM file_versions WHERE conflict_copy = 1',
    );
    expect(copies).toEqual([
      { version: Number(said![1]), content: 'build: alice\n', replaced_at: expect.any(String) },
    ]);
    // The file on the service is still Bob's: the copy is history, not the current version.
    expect(stored()['flows/ci/build.yml']).toBe('build: bob\n');

    const history = await runFlowsync(['history', file], { env: a.env });
    expect(history.stdout).toMatch(new RegExp(`\\b${said![1]} .*\\(conflict copy`));

    // Brought back: written to disk and sent as her edit on top of Bob's (the service unchanged since she took it).
    const restored = await runFlowsync(['restore', file, '--version', said![1]!], { env: a.env });
    expect(restored.code, restored.stderr).toBe(0);
    expect(restored.stdout).toContain('it is sent as your edit');
    await eventually(() => expect(stored()['flows/ci/build.yml']).toBe('build: alice\n'), 20_000);
  }, 180_000);
});
