import { createHash } from 'node:crypto';
import { existsSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { userEnv } from '../support/agent-process.ts';
import { runFlowsync } from '../support/cli.ts';
import { makeRepo, serviceTree, type TestRepo } from '../support/repo.ts';
import { startTestService, type TestService } from '../support/service.ts';

/**
 * Issue 24, "see before it lands": `flowsync sync --dry-run` prints what a sync would send, flow by flow, from the
 * same planner, and changes nothing: the state file and the service's database are the same bytes after.
 */
let svc: TestService | null = null;
let repo: TestRepo | null = null;

afterEach(async () => {
  await svc?.close();
  repo?.cleanup();
  svc = null;
  repo = null;
});

/** Each file's bytes, hashed, for the files that exist of these (a database and its write-ahead log). */
function fingerprint(...paths: string[]): Record<string, string | null> {
  return Object.fromEntries(
    paths.map((path) => [
      path,
      existsSync(path) ? createHash('sha256').update(readFileSync(path)).digest('hex') : null,
    ]),
  );
}

describe('flowsync sync --dry-run', () => {
  it('prints the plan per flow (+ new, ~ changed, - deleted) and changes neither the state nor the service', async () => {
    svc = await startTestService();
    const service = svc;
    repo = makeRepo({
      'flows/ci/build.yml': 'build: 1\n',
      'flows/ci/old.yml': 'old\n',
      'flows/deploy/main.yml': 'deploy\n',
    });
    const tree = repo;
    const home = join(tree.dir, 'home');
    const env = userEnv(home, service);
    const first = await runFlowsync(['sync', tree.root], { env });
    expect(first.code, first.stderr).toBe(0);

    tree.write('flows/ci/build.yml', 'build: 2\n');
    tree.write('flows/ci/new.yml', 'new\n');
    tree.remove('flows/ci/old.yml');
    const statePath = join(home, '.local/share/flowsync/state.db');
    const watched = [statePath, `${statePath}-wal`, service.dbPath, `${service.dbPath}-wal`];
    const before = fingerprint(...watched);
    const storedBefore = serviceTree(service.read, 'local', 'repo');

    const dry = await runFlowsync(['sync', '--dry-run', tree.root], { env });
    expect(dry.code, dry.stderr).toBe(0);
    expect(dry.stdout).toContain('dry run, nothing sent');
    expect(dry.stdout).toContain('  flows/ci: 1 new, 1 changed, 1 deleted\n');
    expect(dry.stdout).toContain('    + new.yml\n    ~ build.yml\n    - old.yml\n');
    expect(dry.stdout).toContain('would send 3 files');
    // The flow that did not change is not in the plan.
    expect(dry.stdout).not.toContain('flows/deploy');
    expect(fingerprint(...watched)).toEqual(before);
    expect(serviceTree(service.read, 'local', 'repo')).toEqual(storedBefore);

    // And the plan is what a sync then does.
    const sync = await runFlowsync(['sync', tree.root], { env });
    expect(sync.code, sync.stderr).toBe(0);
    expect(serviceTree(service.read, 'local', 'repo')).toEqual({
      'flows/ci/build.yml': 'build: 2\n',
      'flows/ci/new.yml': 'new\n',
      'flows/deploy/main.yml': 'deploy\n',
    });
    const after = await runFlowsync(['sync', '--dry-run', tree.root], { env });
    expect(after.stdout).toContain('up to date: nothing to send');
  });

  it('shows a flow root that is not there as held, deleting nothing', async () => {
    svc = await startTestService();
    repo = makeRepo({ 'flows/ci/build.yml': 'build\n' });
    const tree = repo;
    const env = userEnv(join(tree.dir, 'home'), svc);
    expect((await runFlowsync(['sync', tree.root], { env })).code).toBe(0);
    rmSync(join(tree.root, 'flows'), { recursive: true });
    const dry = await runFlowsync(['sync', '--dry-run', tree.root], { env });
    expect(dry.code, dry.stderr).toBe(0);
    expect(dry.stdout).toContain('  flows: held: ');
    expect(dry.stdout).toContain('nothing is deleted on the service until it is back');
    expect(dry.stdout).not.toContain('- build.yml');
  });
});
