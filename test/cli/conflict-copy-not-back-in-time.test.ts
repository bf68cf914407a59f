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
import { diskTree, makeRepo, serviceTree, type TestRepo } from '../support/repo.ts';
import { startServeProcess, type ServeProcess } from '../support/serve-process.ts';
import { readDatabase } from '../support/service.ts';

/**
 * Issue 45, failures 1 and 2, as three teammates live them on one `flowsync serve`. A conflict copy (a version kept
 * in the history by "take theirs", never current) is the newest version of its file: it is no sign that the service
 * went back in time. Read as one, it made every other checkout say "N versions this checkout synced are gone",
 * mark its teammates' edits and deletions as lost (never "newer on the service", never taken), and its hint
 * (`resolve . --mine`) put the old versions back over the teammates' work. And after the steps, no checkout keeps a
 * file the service deleted without naming it.
 */
const FILES = {
  'flows/ci/go.yml': 'go: 1\n',
  'flows/ci/ruby.yml': 'ruby: 1\n',
  'flows/ci/rust.yml': 'rust: 1\n',
};

let serve: ServeProcess | null = null;
let carol: AgentProcess | null = null;
const repos: TestRepo[] = [];

afterEach(async () => {
  carol?.signal('SIGINT');
  await carol?.exitWithin(10_000);
  carol = null;
  await serve?.stop();
  serve = null;
  for (const repo of repos.splice(0)) repo.cleanup();
});

/** A checkout of acme/app with the files, its user's HOME beside it, on the service. */
function teammate(name: string, service: ServeProcess) {
  const repo = makeRepo(FILES);
  repos.push(repo);
  const env = {
    ...userEnv(join(repo.dir, name), service),
    ...NO_KEYCHAIN,
    // The check of the service every minute, shrunk to a second so that the test need not wait for it.
    FLOWSYNC_SERVICE_CHECK_MS: '1000',
  };
  writeAgentConfig(env, [{ path: repo.root, owner: 'acme', name: 'app' }]);
  return {
    ...repo,
    env,
    read: (path: string) => readFileSync(join(repo.root, path), 'utf8'),
    flowsync: (...args: string[]) => runFlowsync(args, { env }),
  };
}

describe('a conflict copy on the service', () => {
  it("is no sign the service went back in time: a teammate's edits and deletion are newer there, taken, never reverted", async () => {
    const place = makeRepo();
    repos.push(place);
    const db = join(place.dir, 'service.db');
    serve = await startServeProcess(db, join(place.dir, 'service.log'));
    const stored = () => serviceTree(readDatabase(db), 'acme', 'app');
    const a = teammate('alice', serve);
    const b = teammate('bob', serve);
    const c = teammate('carol', serve);
    for (const one of [a, b, c]) expect((await one.flowsync('sync', one.root)).code).toBe(0);

    // Carol's agent is stopped. Bob and Alice both change go.yml: Bob's goes first, Alice's is a conflict.
    b.write('flows/ci/go.yml', 'go: bob\n');
    expect((await b.flowsync('sync', b.root)).code).toBe(0);
    a.write('flows/ci/go.yml', 'go: alice\n');
    expect((await a.flowsync('sync', a.root)).code).toBe(4);
    // Alice takes Bob's: hers is kept first, as a conflict copy in the history (the newest version, never current).
    const theirs = await a.flowsync('resolve', join(a.root, 'flows/ci/go.yml'), '--theirs');
    expect(theirs.code, theirs.stderr).toBe(0);
    expect(theirs.stdout).toMatch(/yours is kept as version \d+ in the service's history/);
    expect(a.read('flows/ci/go.yml')).toBe('go: bob\n');
    // Bob deletes ruby.yml and changes rust.yml.
    b.remove('flows/ci/ruby.yml');
    b.write('flows/ci/rust.yml', 'rust: bob\n');
    expect((await b.flowsync('sync', b.root)).code).toBe(0);
    const bobs = { 'flows/ci/go.yml': 'go: bob\n', 'flows/ci/rust.yml': 'rust: bob\n' };
    expect(stored()).toEqual(bobs);

    // Carol starts her agent: her checkout is behind by Bob's three changes, and nothing went back in time.
    carol = startAgentProcess(['start', c.root], c.env);
    await carol.waitFor(/Watching 1 repository/, 60_000);
    const listed = async () => (await c.flowsync('conflicts', c.root)).stdout;
    await expect.poll(listed, { timeout: 60_000, interval: 500 }).toMatch(/ruby\.yml/);
    const conflicts = await c.flowsync('conflicts', c.root);
    const status = await c.flowsync('status');
    const said = [conflicts.stdout, status.stdout, carol.output()].join('\n');
    expect(said).not.toMatch(/went back in time|no longer has the version this checkout synced/);
    expect(conflicts.stdout).toContain(`${c.root}: no conflicts, no deletions held`);
    expect(conflicts.stdout).toContain('3 files newer on the service, unchanged here (not a conflict)');
    // Each named with what Bob did (the service names the writer by his checkout's folder; a deletion by no one).
    const line = (path: string) => conflicts.stdout.split('\n').find((l) => l.startsWith(`  ${path}: `));
    expect(line('flows/ci/go.yml')).toMatch(/: changed on the service by /);
    expect(line('flows/ci/go.yml')).toContain(b.root);
    expect(line('flows/ci/ruby.yml')).toMatch(/: deleted on the service/);
    expect(line('flows/ci/rust.yml')).toMatch(/: changed on the service by /);
    expect(line('flows/ci/rust.yml')).toContain(b.root);
    expect(conflicts.code, conflicts.stdout).toBe(0);
    expect(status.stdout).toContain('3 files newer on the service');

    // "Take them" takes Bob's three changes, go.yml as the service holds it after Alice took his.
    const newer = await c.flowsync('resolve', '--newer', c.root);
    expect(newer.code, newer.stderr).toBe(0);
    expect(newer.stdout).toContain('3 files taken from the service');
    expect(diskTree(c.root)).toEqual(bobs);
    // Her agent settles there: nothing pending, nothing newer, nothing waiting for her.
    const settled = async () => {
      const now = await c.flowsync('status');
      return now.code === 0 && / 0 pending/.test(now.stdout) && !/newer|waiting/.test(now.stdout)
        ? 'settled'
        : now.stdout;
    };
    await expect.poll(settled, { timeout: 60_000, interval: 500 }).toBe('settled');
    // Nothing of Bob's work was put back or aged on the service.
    expect(stored()).toEqual(bobs);

    // No checkout keeps a file the service deleted, or another version than the service's, without naming it.
    // Alice and Bob run no agent: a one-shot run looks at the service first.
    for (const one of [a, b]) expect([0, 4]).toContain((await one.flowsync('sync', one.root)).code);
    for (const one of [a, b, c]) {
      const named = (await one.flowsync('conflicts', one.root)).stdout;
      const disk = diskTree(one.root);
      for (const path of new Set([...Object.keys(disk), ...Object.keys(bobs)]))
        if (disk[path] !== bobs[path as keyof typeof bobs])
          expect(named, `${one.root}: ${path} differs from the service`).toContain(`  ${path}: `);
    }
    expect(existsSync(join(a.root, 'flows/ci/ruby.yml'))).toBe(true);
    expect(stored()).toEqual(bobs);
  }, 240_000);
});
