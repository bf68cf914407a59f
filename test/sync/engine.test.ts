import { renameSync, utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { folderGone } from '../../src/protocol/index.ts';
import { startEngine, type EngineHarness } from '../support/engine.ts';
import { diskTree, eventually, makeRepo, serviceTree, type TestRepo } from '../support/repo.ts';
import { startTestService, type TestService } from '../support/service.ts';

let svc: TestService;
let repo: TestRepo;
let harness: EngineHarness | null = null;

beforeEach(async () => {
  svc = await startTestService();
});
afterEach(async () => {
  await harness?.close();
  harness = null;
  repo.cleanup();
  await svc.close();
});

const stored = () => serviceTree(svc.read, 'acme', 'app');
/** Requests that carried flow content (sync_batch or update_file), counted from the service's own log. */
/** Calls that write flows (a start also reads: capabilities, and list_flows to check the service). */
const uploads = () =>
  svc.logs.filter((line) => line.includes('"msg":"call"') && /sync_batch|update_file/.test(line)).length;

async function start(flowRoots?: string[]) {
  harness = startEngine(repo, svc.url, svc.tokens.user, flowRoots);
  await harness.engine.start();
  return harness;
}

async function expectConverged() {
  await eventually(() => expect(stored()).toEqual(diskTree(repo.root)));
}

describe('initial sync', () => {
  it('sends every flow file, file by file, and nothing that is ignored or not text', async () => {
    repo = makeRepo({
      'flows/hello/main.yaml': 'steps: [greet]\n',
      'flows/hello/steps/greet.ts': 'export const greet = () => "hi";\n',
      'flows/hello/deep/a/b/c.json': '{"deep": true}\n',
      'flows/bye/flow.yaml': 'steps: []\n',
      'flows/README.md': 'a file directly in the flow root belongs to no flow\n',
      'flows/hello/node_modules/dep/index.js': 'ignored\n',
      'flows/hello/.DS_Store': 'litter',
      'flows/hello/main.yaml.swp': 'vim swap',
      'flows/hello/notes~': 'backup',
      'flows/hello/build/out.js': 'ignored by .gitignore\n',
      'flows/hello/secret.env': 'ignored by a nested .gitignore\n',
      'flows/hello/.gitignore': '*.env\n',
      '.gitignore': 'build/\n',
      'flows/hello/logo.png': Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x00, 0x01]),
      'flows/hello/latin1.txt': Buffer.from([0x63, 0x61, 0x66, 0xe9]),
      'flows/hello/big.txt': 'x'.repeat(1024 * 1024 + 1),
      'src/app.ts': 'not under a flow root\n',
    });
    // "café" in Latin-1 ends in a byte that starts a UTF-8 character: written just now, it would be a save cut
    // inside a character and read again for 5 s (stat-cache.test.ts); written long ago, it is binary at once.
    const hourAgo = Date.now() / 1000 - 3600;
    utimesSync(join(repo.root, 'flows/hello/latin1.txt'), hourAgo, hourAgo);
    const { engine } = await start();
    expect(stored()).toEqual({
      'flows/bye/flow.yaml': 'steps: []\n',
      'flows/hello/.gitignore': '*.env\n',
      'flows/hello/deep/a/b/c.json': '{"deep": true}\n',
      'flows/hello/main.yaml': 'steps: [greet]\n',
      'flows/hello/steps/greet.ts': 'export const greet = () => "hi";\n',
    });
    expect(engine.status().counts).toMatchObject({ flows: 2, pending: 0, warnings: 3 });
    expect(harness!.state.warnings(engine.repoId)).toEqual([
      { flowPath: 'flows/hello', path: 'big.txt', warning: 'oversized' },
      { flowPath: 'flows/hello', path: 'latin1.txt', warning: 'binary' },
      { flowPath: 'flows/hello', path: 'logo.png', warning: 'binary' },
    ]);
  });

  it('restarted with nothing changed, sends nothing', async () => {
    repo = makeRepo({ 'flows/a/x.yaml': 'x\n', 'flows/b/y.yaml': 'y\n' });
    await start();
    await harness!.close();
    const before = uploads();
    harness = startEngine(repo, svc.url, svc.tokens.user);
    await harness.engine.start();
    expect(uploads()).toBe(before);
    expect(harness.engine.status().counts.pending).toBe(0);
  });
});

describe('watching', () => {
  beforeEach(() => {
    repo = makeRepo({
      'flows/a/main.yaml': 'v1\n',
      'flows/a/sub/step.ts': 'step\n',
      'flows/b/flow.yaml': 'b\n',
    });
  });

  it('follows create, edit, delete and rename of files and flows', async () => {
    await start();
    await expectConverged();
    repo.write('flows/a/new.yaml', 'created\n');
    await expectConverged();
    repo.write('flows/a/main.yaml', 'v2\n');
    await expectConverged();
    repo.remove('flows/a/sub/step.ts');
    await expectConverged();
    renameSync(join(repo.root, 'flows/a/new.yaml'), join(repo.root, 'flows/a/renamed.yaml'));
    await expectConverged();
    renameSync(join(repo.root, 'flows/b'), join(repo.root, 'flows/b2'));
    await expectConverged();
    repo.remove('flows/a');
    await expectConverged();
    expect(stored()).toEqual({ 'flows/b2/flow.yaml': 'b\n' });
  });

  it('keeps watching every flow: 25 at start, one that appears, one renamed, one deleted and made again', async () => {
    // More flows than one watcher group (10): an edit in each group, and in each folder that came later, is seen.
    for (let flow = 0; flow < 25; flow++) repo.write(`flows/f${flow}/main.yaml`, `${flow}\n`);
    await start();
    await expectConverged();
    for (const flow of [0, 12, 24]) repo.write(`flows/f${flow}/main.yaml`, `edited ${flow}\n`);
    await expectConverged();

    repo.write('flows/late/main.yaml', 'late\n');
    renameSync(join(repo.root, 'flows/f3'), join(repo.root, 'flows/moved'));
    repo.remove('flows/f4');
    await expectConverged();
    repo.write('flows/f4/main.yaml', 'again\n');
    await expectConverged();
    // Each of them is watched now, not only scanned once: later edits inside them arrive.
    repo.write('flows/late/main.yaml', 'late, edited\n');
    repo.write('flows/moved/main.yaml', 'moved, edited\n');
    repo.write('flows/f4/main.yaml', 'again, edited\n');
    repo.write('flows/late/sub/step.yaml', 'a new folder inside a new flow\n');
    await expectConverged();
    expect(stored()['flows/late/sub/step.yaml']).toBe('a new folder inside a new flow\n');
  });

  it('sends an atomic save (write a temporary file, rename it over) once, and never the temporary file', async () => {
    await start();
    const before = uploads();
    const target = join(repo.root, 'flows/a/main.yaml');
    writeFileSync(`${target}.tmp-1234`, 'saved atomically\n');
    renameSync(`${target}.tmp-1234`, target);
    await eventually(() => expect(stored()['flows/a/main.yaml']).toBe('saved atomically\n'));
    await sleep(300);
    expect(uploads() - before).toBe(1);
    expect(Object.keys(stored())).not.toContain('flows/a/main.yaml.tmp-1234');
  });

  it('sends nothing for a touch that changes no content', async () => {
    await start();
    const before = uploads();
    const later = new Date(Date.now() + 5000);
    utimesSync(join(repo.root, 'flows/a/main.yaml'), later, later);
    await sleep(400);
    expect(uploads()).toBe(before);
    expect(harness!.engine.status().counts.pending).toBe(0);
  });

  // Ignoring is not deleting (issue 49): a pulled .gitignore line deleted such files for the whole team.
  it('applies a .gitignore edited while watching: a newly ignored file stays on the service, said; unignored ones arrive', async () => {
    repo.write('flows/a/debug.log', 'log\n');
    repo.write('.gitignore', '*.tmp\n');
    repo.write('flows/a/scratch.tmp', 'scratch\n');
    await start();
    expect(Object.keys(stored())).toContain('flows/a/debug.log');
    expect(Object.keys(stored())).not.toContain('flows/a/scratch.tmp');
    repo.write('.gitignore', '*.log\n');
    await eventually(() => {
      expect(stored()['flows/a/scratch.tmp']).toBe('scratch\n');
      expect(harness!.state.warnings(harness!.engine.repoId)).toEqual([
        { flowPath: 'flows/a', path: 'debug.log', warning: 'ignored' },
      ]);
    });
    expect(stored()['flows/a/debug.log']).toBe('log\n');
    // Deleted here, it is deleted there: only a file gone from disk is a deletion.
    repo.remove('flows/a/debug.log');
    await eventually(() => expect(Object.keys(stored())).not.toContain('flows/a/debug.log'));
  });

  // A file that becomes binary is on disk, not sent: the service keeps the version it had (issue 36).
  it('sends a file that was binary once it becomes text, and keeps the last text of one that becomes binary', async () => {
    repo.write('flows/a/data.bin', Buffer.from([0, 1, 2]));
    await start();
    expect(Object.keys(stored())).not.toContain('flows/a/data.bin');
    repo.write('flows/a/data.bin', 'now text\n');
    await eventually(() => expect(stored()['flows/a/data.bin']).toBe('now text\n'));
    const before = stored()['flows/a/main.yaml'];
    expect(before).toEqual(expect.any(String));
    repo.write('flows/a/main.yaml', Buffer.from([0xff, 0xfe, 0x00]));
    await eventually(() =>
      expect(harness!.state.warnings(harness!.engine.repoId)).toEqual([
        { flowPath: 'flows/a', path: 'main.yaml', warning: 'binary' },
      ]),
    );
    await harness!.engine.sync();
    expect(stored()['flows/a/main.yaml']).toBe(before);
    expect(harness!.engine.status()).toMatchObject({ heldDeletions: 0, counts: { pending: 0 } });
  });

  it('picks up a flow root that appears after the start', async () => {
    repo.remove('flows');
    await start();
    expect(stored()).toEqual({});
    repo.write('flows/late/main.yaml', 'late\n');
    await eventually(() => expect(stored()).toEqual({ 'flows/late/main.yaml': 'late\n' }));
    repo.write('flows/late/more.yaml', 'more\n');
    await expectConverged();
  });

  it('pauses when the repository folder disappears, deleting nothing, and resumes when it is back', async () => {
    await start();
    await expectConverged();
    const away = join(repo.dir, 'moved-away');
    renameSync(repo.root, away);
    await eventually(() => expect(harness!.engine.status().phase).toBe('missing'));
    expect(harness!.engine.status().message).toBe(folderGone(repo.root));
    expect(Object.keys(stored())).toHaveLength(3);
    writeFileSync(join(away, 'flows/b/flow.yaml'), 'edited while away\n');
    renameSync(away, repo.root);
    await eventually(() => expect(stored()['flows/b/flow.yaml']).toBe('edited while away\n'));
    await expectConverged();
  });
});

describe('what the service refuses', () => {
  it('sends a flow over the body limit in parts (issue 21), and its deletions once its listing fits', async () => {
    // Nine files of 0.95 MiB: each may be sent, but together they are over the service's 8 MiB body limit.
    const big: Record<string, string> = {};
    for (let i = 0; i < 9; i++) big[`flows/huge/part${i}.txt`] = `${i}`.repeat(1_000_000);
    repo = makeRepo({ ...big, 'flows/small/main.yaml': 'small\n' });
    const { engine } = await start();
    expect(stored()).toEqual(diskTree(repo.root));
    expect(harness!.state.rejections(engine.repoId)).toEqual([]);
    const before = uploads();
    repo.write('flows/small/main.yaml', 'small v2\n');
    await eventually(() => expect(stored()['flows/small/main.yaml']).toBe('small v2\n'));
    await sleep(300);
    expect(uploads() - before).toBe(1);

    // Files removed: the listing (3 files) fits in one call, so the deletions are sent.
    for (let i = 3; i < 9; i++) repo.remove(`flows/huge/part${i}.txt`);
    await eventually(() => expect(stored()).toEqual(diskTree(repo!.root)));
    expect(harness!.state.rejections(engine.repoId)).toEqual([]);
  });
});
