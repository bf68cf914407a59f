import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setImmediate as yieldToEventLoop, setTimeout as sleep } from 'node:timers/promises';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { startEngine, testEngine, type EngineHarness } from '../support/engine.ts';
import { twoBranches } from '../support/git.ts';
import { diskTree, eventually, makeRepo, serviceTree, type TestRepo } from '../support/repo.ts';
import { startTestService, type TestService } from '../support/service.ts';

/** The watcher is a hint, a rescan the truth; a flow root or repository that is not there deletes nothing (issue 21). */

let svc: TestService;
let repo: TestRepo | null = null;
let harness: EngineHarness | null = null;
const cleanups: (() => void)[] = [];

beforeEach(async () => {
  svc = await startTestService();
});
afterEach(async () => {
  await harness?.close();
  harness = null;
  for (const cleanup of cleanups.splice(0).reverse()) cleanup();
  repo?.cleanup();
  repo = null;
  await svc.close();
});

const stored = () => serviceTree(svc.read, 'acme', 'app');

async function start(tree: TestRepo) {
  harness = startEngine(tree, svc.url, svc.tokens.user);
  await harness.engine.start();
  return harness.engine;
}

/**
 * An engine on `tree` that rescans every 500 ms, started and in sync, with the misses its rescans count; then
 * `hide` mounts a folder holding `files` over the repository's `folder`, where no watcher hears of the change.
 */
async function startRescanning(tree: TestRepo) {
  harness = testEngine({
    root: tree.root,
    statePath: join(tree.dir, 'state.db'),
    url: svc.url,
    userToken: svc.tokens.user,
    timings: { rescanIntervalMs: 500 },
  });
  const misses: { files: number; reason: string }[] = [];
  harness.engine.on('missed', (miss) => misses.push(miss));
  await harness.engine.start();
  await eventually(() => expect(stored()).toEqual(diskTree(tree.root)));
  const hide = (folder: string, files: Record<string, string>) => {
    // A folder mounted over a watched one: its watch stays on the folder below, and no event says anything changed.
    const holder = mkdtempSync(join(tmpdir(), 'flowsync-over-'));
    cleanups.push(() => rmSync(holder, { recursive: true, force: true }));
    for (const [name, text] of Object.entries(files)) writeFileSync(join(holder, name), text);
    const over = join(tree.root, folder);
    execFileSync('mount', ['--bind', holder, over]);
    cleanups.push(() => execFileSync('umount', ['-l', over]));
  };
  return { misses, hide };
}

function flowFiles(flows: number, files: number): Record<string, string> {
  const tree: Record<string, string> = {};
  for (let flow = 0; flow < flows; flow++)
    for (let file = 0; file < files; file++)
      tree[`flows/f${flow}/file-${file}.yml`] = `flow ${flow} file ${file}\n`;
  return tree;
}

describe('a new folder whose files are written before its watch is in place', () => {
  it('sends every file of it without a further edit', async () => {
    const tree = makeRepo({ 'flows/x/main.yml': 'steps: []\n' });
    repo = tree;
    await start(tree);
    await eventually(() => expect(stored()).toEqual(diskTree(tree.root)));
    // Folders made and filled at once, many times: files written between the folder's first scan and its watch
    // were never looked at again.
    for (let folder = 0; folder < 40; folder++) {
      mkdirSync(join(tree.root, `flows/x/gen/d${folder}/deeper`), { recursive: true });
      for (let file = 0; file < 3; file++) {
        writeFileSync(join(tree.root, `flows/x/gen/d${folder}/new-${file}.yml`), `new ${folder} ${file}\n`);
        writeFileSync(join(tree.root, `flows/x/gen/d${folder}/deeper/new-${file}.yml`), `deep ${file}\n`);
        await yieldToEventLoop();
      }
    }
    await eventually(() => expect(stored()).toEqual(diskTree(tree.root)), 20_000);
    await eventually(() => expect(harness!.engine.status().counts.pending).toBe(0));
  });
});

describe('a flow root deleted and re-created within a second', () => {
  it('keeps hearing edits, new files and new flows (rm -rf flows && git checkout -- flows)', async () => {
    const tree = makeRepo(flowFiles(5, 4));
    repo = tree;
    const git = twoBranches(tree.root, () => writeFileSync(join(tree.root, 'flows/f0/other.yml'), 'other\n'));
    const engine = await start(tree);
    await eventually(() => expect(stored()).toEqual(diskTree(tree.root)));

    for (let round = 0; round < 2; round++) {
      rmSync(join(tree.root, 'flows'), { recursive: true, force: true });
      git('checkout', '--', 'flows');
      // Time for the agent to notice, or not, before the edits that follow.
      await sleep(1500);
      tree.write('flows/f1/file-0.yml', `edited ${round}\n`);
      tree.write(`flows/f2/new-${round}.yml`, 'a new file\n');
      tree.write(`flows/new-flow-${round}/main.yml`, 'a new flow\n');
      await eventually(() => expect(stored()).toEqual(diskTree(tree.root)));
      await eventually(() => expect(engine.status().counts.pending).toBe(0));
    }
  });
});

describe('a checkout of a branch without flows/', () => {
  it('deletes nothing on the service and says so; back on the branch, it converges', async () => {
    const tree = makeRepo(flowFiles(10, 5));
    repo = tree;
    const git = twoBranches(tree.root, () => rmSync(join(tree.root, 'flows'), { recursive: true }));
    const engine = await start(tree);
    await eventually(() => expect(stored()).toEqual(diskTree(tree.root)));
    const before = stored();

    git('checkout', '-q', 'other');
    await eventually(() =>
      expect(engine.status()).toMatchObject({ phase: 'missing', message: expect.stringContaining('flows') }),
    );
    await engine.sync(); // a round asked for explicitly sends nothing either
    expect(stored()).toEqual(before);

    git('checkout', '-q', 'main');
    tree.write('flows/f3/file-1.yml', 'edited after the checkout back\n');
    await eventually(() => expect(stored()).toEqual(diskTree(tree.root)));
    await eventually(() => expect(engine.status()).toMatchObject({ phase: 'idle', counts: { pending: 0 } }));
  });
});

describe('a repository on a drive', () => {
  /** A tmpfs that holds the repository, and an empty folder (the mount point) it is bind-mounted on. */
  function drive() {
    const holder = mkdtempSync(join(tmpdir(), 'flowsync-drive-'));
    execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=16m', 'tmpfs', holder]);
    const point = mkdtempSync(join(tmpdir(), 'flowsync-mount-'));
    let mounted = false;
    const mount = () => {
      execFileSync('mount', ['--bind', holder, point]);
      mounted = true;
    };
    const unmount = () => {
      execFileSync('umount', [point]);
      mounted = false;
    };
    cleanups.push(() => {
      if (mounted) execFileSync('umount', ['-l', point]);
      execFileSync('umount', ['-l', holder]);
      rmSync(point, { recursive: true, force: true });
      rmSync(holder, { recursive: true, force: true });
    });
    const files = flowFiles(10, 5);
    for (const [path, content] of Object.entries(files)) {
      mkdirSync(join(holder, path, '..'), { recursive: true });
      writeFileSync(join(holder, path), content);
    }
    return { holder, point, mount, unmount };
  }

  function engineOn(root: string, statePath: string) {
    harness = testEngine({ root, statePath, url: svc.url, userToken: svc.tokens.user });
    return harness.engine;
  }

  it('unmounted while watched, keeps every file on the service; mounted again, converges', async () => {
    const { holder, point, mount, unmount } = drive();
    const statePath = join(svc.dir, 'state.db');
    mount();
    const engine = engineOn(point, statePath);
    await engine.start();
    await eventually(() => expect(stored()).toEqual(diskTree(point)));
    const before = stored();
    expect(Object.keys(before)).toHaveLength(50);

    unmount();
    await eventually(() => expect(engine.status()).toMatchObject({ phase: 'missing' }));
    await engine.sync();
    expect(stored()).toEqual(before);

    writeFileSync(join(holder, 'flows/f0/file-0.yml'), 'edited while unmounted\n');
    mount();
    await eventually(() => expect(stored()).toEqual(diskTree(point)));
    await eventually(() => expect(engine.status()).toMatchObject({ phase: 'idle', counts: { pending: 0 } }));
  });

  it('started before the drive is mounted, deletes nothing and says it is missing; mounted, converges', async () => {
    const { holder, point, mount, unmount } = drive();
    const statePath = join(svc.dir, 'state.db');
    mount();
    const first = engineOn(point, statePath);
    await first.start();
    await eventually(() => expect(stored()).toEqual(diskTree(point)));
    await harness!.close();
    harness = null;
    const before = stored();

    unmount();
    const engine = engineOn(point, statePath);
    await engine.start();
    await eventually(() => expect(engine.status()).toMatchObject({ phase: 'missing' }));
    await engine.sync();
    expect(stored()).toEqual(before);

    writeFileSync(join(holder, 'flows/f1/new.yml'), 'written before the mount\n');
    mount();
    await eventually(() => expect(stored()).toEqual(diskTree(point)));
    await eventually(() => expect(engine.status()).toMatchObject({ phase: 'idle', counts: { pending: 0 } }));
  });
});

describe('a change the watcher cannot hear', () => {
  it('is found by the periodic rescan, sent, and counted as missed', async () => {
    const tree = makeRepo({ 'flows/x/main.yml': 'steps: []\n', 'flows/x/sub/old.yml': 'old\n' });
    repo = tree;
    const { misses, hide } = await startRescanning(tree);

    hide('flows/x/sub', { 'new.yml': 'heard of by no watcher\n' });
    await eventually(() => expect(stored()).toEqual(diskTree(tree.root)));
    expect(stored()).toMatchObject({ 'flows/x/sub/new.yml': 'heard of by no watcher\n' });
    expect(misses).toContainEqual({ files: 2, reason: 'periodic' });
    // The service answers before the engine records its answer: the count follows a moment later.
    await eventually(() =>
      expect(harness!.engine.status()).toMatchObject({ missed: 2, counts: { pending: 0 } }),
    );
  });
});

describe('files the watcher cannot hear, rewritten', () => {
  it('are counted as missed only where their bytes changed, not where only their stat did', async () => {
    const tree = makeRepo({
      'flows/x/main.yml': 'steps: []\n',
      'flows/x/sub/same.yml': 'same bytes\n',
      'flows/x/sub/edited.yml': 'before\n',
    });
    repo = tree;
    const { misses, hide } = await startRescanning(tree);

    // Both files get another inode and mtime.
    hide('flows/x/sub', { 'same.yml': 'same bytes\n', 'edited.yml': 'after\n' });
    await eventually(() => expect(stored()).toMatchObject({ 'flows/x/sub/edited.yml': 'after\n' }));
    expect(misses).toEqual([{ files: 1, reason: 'periodic' }]);
    await eventually(() =>
      expect(harness!.engine.status()).toMatchObject({ missed: 1, counts: { pending: 0 } }),
    );
  });
});

describe('a flow root replaced by another drive', () => {
  it('deletes nothing and sends nothing of it while it is there; unmounted, converges', async () => {
    const tree = makeRepo(flowFiles(5, 4));
    repo = tree;
    const engine = await start(tree);
    await eventually(() => expect(stored()).toEqual(diskTree(tree.root)));
    const before = stored();

    const flows = join(tree.root, 'flows');
    execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=1m', 'tmpfs', flows]);
    let mounted = true;
    cleanups.push(() => {
      if (mounted) execFileSync('umount', ['-l', flows]);
    });
    tree.write('flows/elsewhere/main.yml', 'a flow of another drive\n');
    await eventually(() =>
      expect(engine.status()).toMatchObject({
        phase: 'missing',
        message: expect.stringContaining('another drive'),
      }),
    );
    await engine.sync();
    expect(stored()).toEqual(before);

    execFileSync('umount', [flows]);
    mounted = false;
    tree.write('flows/f2/file-0.yml', 'edited on the first drive\n');
    await eventually(() => expect(stored()).toEqual(diskTree(tree.root)));
    await eventually(() => expect(engine.status()).toMatchObject({ phase: 'idle', counts: { pending: 0 } }));
  });
});
