import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterEach, describe, expect, it } from 'vitest';
import { IgnoreRules } from '../../src/sync/ignore-rules.ts';
import { FolderWatchBudget } from '../../src/sync/watch-budget.ts';
import { FlowWatcher } from '../../src/sync/watcher.ts';
import { makeRepo, type TestRepo } from '../support/repo.ts';

/**
 * Closing the watcher while a root's watch is still being set up (chokidar has not said "ready"): chokidar drops
 * every listener on close, so a setup waiting for "ready" waited forever, and with it the engine's queue and its
 * stop. Seen once in a suite run on a loaded machine (roots.test.ts: its afterEach's close timed out at 60 s).
 */
let repo: TestRepo | null = null;

afterEach(() => {
  repo?.cleanup();
  repo = null;
});

describe('the watcher closed while a root is being watched', () => {
  it('ends the setup at once instead of waiting for a "ready" that never comes', async () => {
    repo = makeRepo();
    // Enough folders that chokidar's walk of them takes a while: the close lands in the middle of it.
    for (let f = 0; f < 400; f++) mkdirSync(join(repo.root, `flows/f${f}/a/b`), { recursive: true });
    const watcher = new FlowWatcher(
      repo.root,
      new IgnoreRules(repo.root),
      () => {},
      () => {},
      () => {},
      new FolderWatchBudget(100_000),
    );
    const setup = watcher.add(['flows']);
    await sleep(5);
    await watcher.close();
    const ended = await Promise.race([setup.then(() => 'ended'), sleep(5000).then(() => 'still waiting')]);
    expect(ended).toBe('ended');
  });
});
