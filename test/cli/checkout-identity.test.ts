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
 * Issue 41: who wrote a version is a checkout's own random id, not `user@host:path`. Two machines made from one
 * image (or two containers) share user, host name and folder: here two HOMEs, each with its checkout at `~/repo`,
 * so both carry the same label. Neither may take the other's version for its own: the second edit is a conflict,
 * never written over the first.
 */

let serve: ServeProcess | null = null;
let agent: AgentProcess | null = null;
const repos: TestRepo[] = [];

afterEach(async () => {
  agent?.signal('SIGINT');
  await agent?.exitWithin(10_000);
  agent = null;
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

    // A's agent runs; B syncs now and then (its first round: the same content, no conflict).
    agent = startAgentProcess(['start', a.repo.root], a.env);
    await agent.waitFor(/Watching 1 repository/, 60_000);
    expect((await runFlowsync(['sync', b.repo.root], { env: b.env })).code).toBe(0);

    // B's edit goes first; A's agent, whose edit is on the old version, must not take B's for its own.
    b.repo.write('flows/ci/build.yml', 'build: b\n');
    expect((await runFlowsync(['sync', b.repo.root], { env: b.env })).code).toBe(0);
    a.repo.write('flows/ci/build.yml', 'build: a\n');
    await agent.waitFor(
      /conflict flows\/ci\/build\.yml: changed on the service by .*~\/repo \(checkout [0-9a-f]{12}\)/,
    );
    expect(stored()['flows/ci/build.yml']).toBe('build: b\n');
    const listed = await runFlowsync(['conflicts', a.repo.root], { env: a.env });
    expect(listed.code).toBe(4);
    expect(listed.stdout).toMatch(
      /flows\/ci\/build\.yml: changed on the service by .*~\/repo .*; you changed it/,
    );

    // The other way round, with one-shot syncs: B's edit on the old version is refused too.
    b.repo.write('flows/ci/build.yml', 'build: b again\n');
    await runFlowsync(['resolve', join(a.repo.root, 'flows/ci/build.yml'), '--mine'], { env: a.env });
    await eventually(() => expect(stored()['flows/ci/build.yml']).toBe('build: a\n'));
    const refused = await runFlowsync(['sync', b.repo.root], { env: b.env });
    expect(refused.code, refused.stdout + refused.stderr).toBe(4);
    expect(stored()['flows/ci/build.yml']).toBe('build: a\n');

    // A third checkout of that label, its state fresh, with another content: no version there is its own.
    const c = checkoutAtHome({ 'flows/ci/build.yml': 'build: c\n' }, serve);
    const fresh = await runFlowsync(['sync', c.repo.root], { env: c.env });
    expect(fresh.code, fresh.stdout + fresh.stderr).toBe(4);
    expect(stored()['flows/ci/build.yml']).toBe('build: a\n');

    // The history names each checkout: the same label, and its own id beside it.
    const names = writers();
    expect(names).toHaveLength(2);
    for (const name of names) expect(name).toMatch(/^\S+@\S+:~\/repo \(checkout [0-9a-f]{12}\)$/);
  }, 120_000);
});
