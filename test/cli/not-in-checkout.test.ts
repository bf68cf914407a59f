import { existsSync, readFileSync } from 'node:fs';
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
import { diskTree, eventually, makeRepo, serviceTree, type TestRepo } from '../support/repo.ts';
import { startServeProcess, type ServeProcess } from '../support/serve-process.ts';
import { readDatabase } from '../support/service.ts';

/**
 * Issue 24: a fresh state (a new clone, CI, a rebuilt state) learns the service's files first; those it never had
 * are listed ("2 files on the service are not in this checkout"), kept, and settled only when its user says which:
 * `resolve --not-in-checkout --mine` deletes them on the service, `--theirs` writes them to disk. Two users with
 * their own HOMEs and checkouts of acme/app, on one `flowsync serve`, each command a real process.
 */
let serve: ServeProcess | null = null;
const repos: TestRepo[] = [];
let agent: AgentProcess | null = null;

afterEach(async () => {
  agent?.signal('SIGKILL');
  await agent?.exited;
  agent = null;
  await serve?.stop();
  serve = null;
  for (const repo of repos.splice(0)) repo.cleanup();
});

/** A, who synced acme/app with 4 files; B, a fresh checkout that has only one of them, and a file of its own. */
async function aFreshCheckout() {
  const a = makeRepo({
    'flows/ci/build.yml': 'build: 1\n',
    'flows/ci/lint.yml': 'lint: A\n',
    'flows/ci/local.yml': "A's local settings\n",
    'flows/deploy/prod.yml': 'prod: A\n',
  });
  // B ignores local.yml (its own is on disk, not synced), and has not got lint.yml or the deploy flow.
  const b = makeRepo({
    'flows/ci/build.yml': 'build: 1\n',
    'flows/ci/test.yml': 'test: B\n',
    'flows/ci/local.yml': "B's local settings\n",
    '.gitignore': 'flows/ci/local.yml\n',
  });
  repos.push(a, b);
  serve = await startServeProcess(join(a.dir, 'service.db'), join(a.dir, 'service.log'));
  const user = (repo: TestRepo) => {
    const env = {
      ...userEnv(join(repo.dir, 'home'), serve!),
      ...NO_KEYCHAIN,
    };
    writeAgentConfig(env, [{ path: repo.root, owner: 'acme', name: 'app' }]);
    return { env, run: (...args: string[]) => runFlowsync(args, { env, cwd: repo.root }) };
  };
  const { run: runA } = user(a);
  const { run: runB, env: envB } = user(b);
  const stored = () => serviceTree(readDatabase(join(a.dir, 'service.db')), 'acme', 'app');
  const first = await runA('sync', '.');
  expect(first.code, first.stderr).toBe(0);
  // Files on the service not in this checkout wait for their user: exit 4, as for a conflict (needsOf).
  const synced = await runB('sync', '.');
  expect(synced.code, synced.stderr).toBe(4);
  // Learnt, counted and said; kept on the service, not fetched.
  expect(synced.stderr).toContain(
    '3 files on the service are not in this checkout (kept there, not deleted)',
  );
  const before = stored();
  expect(before).toEqual({
    'flows/ci/build.yml': 'build: 1\n',
    'flows/ci/lint.yml': 'lint: A\n',
    'flows/ci/local.yml': "A's local settings\n",
    'flows/ci/test.yml': 'test: B\n',
    'flows/deploy/prod.yml': 'prod: A\n',
  });
  return { a, b, runA, runB, envB, stored, before };
}

describe('flowsync resolve --not-in-checkout', () => {
  it('lists the files on the service this checkout never had, and changes nothing', async () => {
    const { runB, stored, before, b } = await aFreshCheckout();
    const disk = diskTree(b.root);
    const listed = await runB('resolve', '--not-in-checkout');
    expect(listed.code, listed.stderr).toBe(4);
    expect(listed.stdout).toContain(`${b.root}: 3 files on the service are not in this checkout\n`);
    expect(listed.stdout).toMatch(
      / {2}flows\/ci\/lint\.yml: written by \S+ \(checkout [0-9a-f]{12}\) at \d{4}-/,
    );
    expect(listed.stdout).toContain('  flows/ci/local.yml: written by');
    expect(listed.stdout).toContain('  flows/deploy/prod.yml: written by');
    expect(listed.stdout).not.toContain('build.yml');
    expect(stored()).toEqual(before);
    expect(diskTree(b.root)).toEqual(disk);
  }, 90_000);

  it('--theirs writes them to disk from the service, never over a file of its own, and the two agree', async () => {
    const { runB, stored, before, b } = await aFreshCheckout();
    const written = await runB('resolve', '--not-in-checkout', '--theirs');
    expect(written.code, written.stderr).toBe(0);
    expect(written.stdout).toContain(
      `${b.root}: 2 files written to disk from the service's copy\n  + flows/ci/lint.yml\n  + flows/deploy/prod.yml\n`,
    );
    expect(written.stdout).toContain(
      '  flows/ci/local.yml: not written: ignored here (.gitignore): it would not be synced',
    );
    expect(readFileSync(join(b.root, 'flows/ci/lint.yml'), 'utf8')).toBe('lint: A\n');
    expect(readFileSync(join(b.root, 'flows/deploy/prod.yml'), 'utf8')).toBe('prod: A\n');
    expect(readFileSync(join(b.root, 'flows/ci/local.yml'), 'utf8')).toBe("B's local settings\n");
    expect(stored()).toEqual(before);
    // Recorded as in sync: the next round sends nothing, and only the ignored file is still not here (it waits:
    // exit 4).
    const again = await runB('sync', '.');
    expect(again.code, again.stderr).toBe(4);
    expect(again.stdout).toMatch(/acme\/app with http:\/\/127.0.0.1:\d+: up to date/);
    expect(stored()).toEqual(before);
    const left = await runB('resolve', '--not-in-checkout');
    expect(left.stdout).toContain(`${b.root}: 1 file on the service is not in this checkout\n`);
    expect(left.stdout).toContain('  flows/ci/local.yml: written by');
  }, 90_000);

  it('--mine deletes them on the service, on the versions listed, and nothing of either checkout else', async () => {
    const { a, runA, runB, stored, before, b } = await aFreshCheckout();
    const disk = diskTree(b.root);
    // Without a yes (no terminal to ask at, no --yes): listed, named, and nothing deleted (issue 41).
    const asked = await runB('resolve', '--not-in-checkout', '--mine');
    expect(asked.code, asked.stderr).toBe(4);
    expect(asked.stdout).toContain(`${b.root}: 3 files on the service are not in this checkout\n`);
    expect(asked.stdout).toMatch(/ {2}flows\/ci\/lint\.yml: written by \S+ .*at \d{4}-/);
    expect(asked.stdout).toContain(
      `${b.root}: nothing deleted: \`flowsync resolve --not-in-checkout --mine --yes ${b.root}\` deletes these 3 on the service`,
    );
    expect(stored()).toEqual(before);
    const deleted = await runB('resolve', '--not-in-checkout', '--mine', '--yes');
    expect(deleted.code, deleted.stderr).toBe(0);
    expect(deleted.stdout).toContain(
      `${b.root}: 3 files not in this checkout deleted on the service\n` +
        '  - flows/ci/lint.yml\n  - flows/ci/local.yml\n  - flows/deploy/prod.yml\n',
    );
    expect(stored()).toEqual({ 'flows/ci/build.yml': 'build: 1\n', 'flows/ci/test.yml': 'test: B\n' });
    expect(diskTree(b.root)).toEqual(disk);
    const left = await runB('resolve', '--not-in-checkout');
    expect(left.code, left.stderr).toBe(0);
    expect(left.stdout).toContain(`${b.root}: every file on the service is in this checkout`);
    // A's checkout still has them: its next round finds them deleted on the service, untouched here: newer on the
    // service (issue 41: behind, not a conflict), never silently sent back nor silently removed from A's disk.
    const seen = await runA('sync', '.');
    // Exit 4: B's file is on the service and not in A's checkout, which waits for A's user (needsOf, issue 42).
    expect(seen.code, seen.stdout + seen.stderr).toBe(4);
    expect((await runA('conflicts', '.')).stdout).toContain(
      '3 files newer on the service, unchanged here (not a conflict)',
    );
    expect(existsSync(join(a.root, 'flows/ci/lint.yml'))).toBe(true);
    expect(stored()).toEqual({ 'flows/ci/build.yml': 'build: 1\n', 'flows/ci/test.yml': 'test: B\n' });
  }, 90_000);

  it('goes through the running agent, whose watcher then finds the files written in sync', async () => {
    const { runB, envB, stored, before, b } = await aFreshCheckout();
    agent = startAgentProcess(['start'], envB);
    await agent.waitFor(/Watching 1 repository/);
    const listed = await runFlowsync(['status'], { env: envB });
    // Counted as waiting, as conflicts are: `status` said nothing of them in its exit code (issue 42).
    expect(listed.code, listed.stderr).toBe(4);
    expect(listed.stdout).toContain('  waiting for you: 3 files not in this checkout\n');
    expect(listed.stdout).toContain(
      'now: waiting for you: 3 files on the service are not in this checkout (kept there, not deleted): `flowsync resolve --not-in-checkout` lists them',
    );
    const written = await runB('resolve', '--not-in-checkout', '--theirs');
    expect(written.code, written.stderr).toBe(0);
    expect(written.stdout).toContain(`${b.root}: 2 files written to disk from the service's copy`);
    expect(readFileSync(join(b.root, 'flows/deploy/prod.yml'), 'utf8')).toBe('prod: A\n');
    await eventually(async () => {
      const status = await runFlowsync(['status'], { env: envB });
      expect(status.stdout).toMatch(/2 flows, 4 files, 0 pending/);
      expect(status.stdout).toContain('now: waiting for you: 1 file on the service is not in this checkout');
    });
    expect(stored()).toEqual(before);
  }, 90_000);

  it('refuses --held with it as any usage mistake (exit 2), and changes nothing', async () => {
    const { runB, stored, before, b } = await aFreshCheckout();
    const disk = diskTree(b.root);
    const both = await runB('resolve', '--not-in-checkout', '--held', '--mine');
    expect(both.code).toBe(2);
    expect(both.stderr).toMatch(/^error: option '--not-in-checkout' cannot be used with option '--held'\n/);
    expect(stored()).toEqual(before);
    expect(diskTree(b.root)).toEqual(disk);
  }, 90_000);
});
