import { mkdirSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { boundedPatterns } from '../../src/sync/ignore-rules.ts';
import { FolderWatchBudget } from '../../src/sync/watch-budget.ts';
import { createEngine, type EngineHarness } from '../support/engine.ts';
import { userEnv } from '../support/agent-process.ts';
import { runFlowsync } from '../support/cli.ts';
import { makeRepo, serviceTree, type TestRepo } from '../support/repo.ts';
import { startTestService, type TestService } from '../support/service.ts';

/**
 * What a cloned repository must not be able to do to the agent: stall it, or take the user's whole inotify budget
 * (issue 20: 200,000 empty folders took 75 s, 2.88 GB and 192,497 of the user's 192,536 watches; one `.gitignore`
 * pattern kept the first scan from ever finishing).
 */
let svc: TestService;
let repo: TestRepo | undefined;
beforeEach(async () => {
  svc = await startTestService();
});
afterEach(async () => {
  repo?.cleanup();
  repo = undefined;
  await svc.close();
});

describe('a .gitignore pattern that would take forever to match', () => {
  it('is told apart from the patterns real repositories write', () => {
    const usual = [
      '**/node_modules/',
      'build/**',
      '/dist',
      '!keep.log',
      'docs/**/*.md',
      'a/**/**/**/b',
      '# a/**/b/**/c',
    ];
    expect(boundedPatterns(usual.join('\n'))).toEqual({
      lines: usual.map((line) => (line === 'a/**/**/**/b' ? 'a/**/b' : line)),
      refused: [],
    });
    expect(boundedPatterns('ok\na/**/b/**/c\n!x/**/y/**/z\n' + '*?'.repeat(20)).refused).toEqual([
      { line: 2, pattern: 'a/**/b/**/c' },
      { line: 3, pattern: '!x/**/y/**/z' },
      { line: 4, pattern: '*?'.repeat(20) },
    ]);
  });

  it('is reported, not applied, and the first sync finishes', async () => {
    // Every middle `**` is a `(?:/[^/]+)*` in the regular expression the `ignore` package makes of it: against a
    // path 60 folders deep, eight of them try some 2.5 billion ways to split the path before they fail.
    const hostile = 'flows/**/d/**/d/**/d/**/d/**/d/**/d/**/d/**/d/**/x';
    const deep = `flows/deep/${Array(60).fill('d').join('/')}/main.yaml`;
    repo = makeRepo({
      '.gitignore': `*.log\n${hostile}\n`,
      'flows/hello/main.yaml': 'hello\n',
      'flows/hello/debug.log': 'ignored\n',
      [deep]: 'deep\n',
    });
    const { dir, root } = repo;
    const sync = await runFlowsync(['sync', root], {
      env: userEnv(`${dir}/home`, svc),
      timeoutMs: 90_000,
    });
    expect(sync.code, sync.stderr).toBe(0);
    expect(sync.stderr).toContain(`.gitignore line 2 is not applied`);
    expect(sync.stderr).toContain(hostile);
    // The other lines still count; the refused one ignores nothing.
    expect(serviceTree(svc.read, 'local', 'repo')).toEqual({
      'flows/hello/main.yaml': 'hello\n',
      [deep]: 'deep\n',
    });
  }, 120_000);
});

/** The inotify watches this process holds now, as the kernel counts them (a line per watch in fdinfo). */
function inotifyWatches(): number {
  let count = 0;
  for (const fd of readdirSync('/proc/self/fdinfo')) {
    try {
      count += readFileSync(`/proc/self/fdinfo/${fd}`, 'utf8')
        .split('\n')
        .filter((line) => line.startsWith('inotify wd:')).length;
    } catch {
      // closed meanwhile
    }
  }
  return count;
}

describe('a repository with more folders than the agent watches', () => {
  const CAP = 100;
  let harness: EngineHarness | undefined;
  afterEach(async () => {
    await harness?.close();
    harness = undefined;
  });

  function engineFor(root: string, dir: string) {
    harness = createEngine({
      root,
      statePath: join(dir, 'state.db'),
      url: svc.url,
      userToken: svc.tokens.user,
      watchBudget: new FolderWatchBudget(CAP),
      timings: { presenceIntervalMs: 100 },
    });
    return harness.engine;
  }

  function makeFolders(root: string, count: number): void {
    for (let i = 0; i < count; i++) mkdirSync(join(root, `flows/many/f${i}`), { recursive: true });
  }

  it('is not watched at all, says so with what to do, and still has its files sent', async () => {
    repo = makeRepo({ 'flows/hello/main.yaml': 'hello\n' });
    makeFolders(repo.root, 3 * CAP);
    const before = inotifyWatches();
    const engine = engineFor(repo.root, repo.dir);
    await engine.start();
    // The folders' watches would be 3 * CAP + 3 (the root, hello, many): none of them is taken.
    expect(inotifyWatches() - before).toBeLessThanOrEqual(CAP);
    expect(engine.status().message).toMatch(
      /^flows is not watched: it has more folders than flowsync watches \(100 in all.*\.gitignore/,
    );
    expect(serviceTree(svc.read, 'acme', 'app')).toEqual({ 'flows/hello/main.yaml': 'hello\n' });
  }, 60_000);

  it('lets go of a watched repository whose folders grow past the cap (a checkout of another branch)', async () => {
    repo = makeRepo({ 'flows/hello/main.yaml': 'hello\n' });
    const before = inotifyWatches();
    const engine = engineFor(repo.root, repo.dir);
    await engine.start();
    expect(engine.status().message).toBeNull();
    makeFolders(repo.root, 3 * CAP);
    await expect.poll(() => engine.status().message, { timeout: 30_000 }).toMatch(/^flows is not watched/);
    await expect.poll(() => inotifyWatches() - before, { timeout: 30_000 }).toBeLessThanOrEqual(CAP);
  }, 60_000);
});
