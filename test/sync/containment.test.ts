import { execFileSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import {
  appendFileSync,
  closeSync,
  constants,
  existsSync,
  mkdirSync,
  mkdtempSync,
  openSync,
  readFileSync,
  renameSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { Hasher } from '../../src/sync/index.ts';
import { userEnv } from '../support/agent-process.ts';
import { runFlowsync } from '../support/cli.ts';
import { startEngine, testEngine, type EngineHarness } from '../support/engine.ts';
import { eventually, makeRepo, serviceTree, type TestRepo } from '../support/repo.ts';
import { startTestService, type TestService } from '../support/service.ts';

/**
 * The attack: a hostile repository whose flows link to the developer's ~/.ssh (a folder outside the repository
 * holding a secret marker), loop back on themselves, or hold a FIFO. The agent must send the repository's own
 * files and none of the targets' bytes, say why each link or FIFO is not sent, and never hang.
 */
const MARKER = `SECRET-MARKER-${randomUUID()}`;

let svc: TestService;
let repo: TestRepo;
/** Stands in for ~/.ssh: outside the repository, holding what must never leave the machine. */
let ssh: string;
let harness: EngineHarness | null = null;
const fifos: string[] = [];

beforeEach(async () => {
  svc = await startTestService();
  ssh = mkdtempSync(join(tmpdir(), 'flowsync-ssh-'));
  writeFileSync(join(ssh, 'id_rsa'), `-----BEGIN ${MARKER}-----\n`);
  writeFileSync(join(ssh, 'config'), `Host * # ${MARKER}\n`);
});
afterEach(async () => {
  // A reader stuck on a FIFO (the bug) is let go, so that a failing test cannot hang the run.
  for (const fifo of fifos.splice(0)) release(fifo);
  await harness?.close();
  harness = null;
  repo?.cleanup();
  rmSync(ssh, { recursive: true, force: true });
  await svc.close();
});

function link(target: string, path: string) {
  mkdirSync(join(repo.root, path, '..'), { recursive: true });
  symlinkSync(target, join(repo.root, path));
}

function mkfifo(path: string) {
  const absolute = join(repo.root, path);
  mkdirSync(join(absolute, '..'), { recursive: true });
  execFileSync('mkfifo', [absolute]);
  fifos.push(absolute);
}

/** Opens a FIFO for writing without blocking and closes it: a reader blocked on it sees the end of the file. */
function release(fifo: string) {
  try {
    closeSync(openSync(fifo, constants.O_WRONLY | constants.O_NONBLOCK));
  } catch {
    // ENXIO: nobody is reading it, nothing to release.
  }
}

/** Whether the marker's bytes are anywhere the service keeps anything: its database, its journal, its log. */
function serviceHolds(marker: string): boolean {
  const files = [svc.dbPath, `${svc.dbPath}-wal`].filter((file) => existsSync(file));
  return (
    files.some((file) => readFileSync(file).includes(marker)) ||
    svc.logs.some((line) => line.includes(marker))
  );
}

const stored = () => serviceTree(svc.read, 'acme', 'app');

async function start(flowRoots?: string[]) {
  harness = startEngine(repo, svc.url, svc.tokens.user, flowRoots);
  await harness.engine.start();
  return harness;
}

describe('a repository full of links to ~/.ssh', () => {
  it('syncs its own files, sends none of the targets, lists every link and FIFO with its reason', async () => {
    repo = makeRepo({
      'flows/good/main.yaml': 'steps: [own]\n',
      'flows/good/sub/step.yaml': 'step\n',
      'flows/pipe/main.yaml': 'pipe\n',
    });
    link(join(ssh, 'id_rsa'), 'flows/good/key'); // a file linking to the secret file
    link(ssh, 'flows/good/ssh'); // a folder inside a flow linking to ~/.ssh
    link(ssh, 'flows/stolen'); // a flow folder that is a link
    link(ssh, 'flows/good/sub/deeper'); // and one further down
    link(ssh, 'flows/good/node_modules'); // ignored like any node_modules: not even a warning
    mkfifo('flows/pipe/fifo');
    // The state where `flowsync status` looks for it, so that the command a user types is what is checked.
    const home = join(repo.dir, 'home');
    harness = testEngine({
      root: repo.root,
      statePath: join(home, '.local/share/flowsync/state.db'),
      url: svc.url,
      userToken: svc.tokens.user,
    });
    const { engine, state } = harness;
    await engine.start();

    expect(stored()).toEqual({
      'flows/good/main.yaml': 'steps: [own]\n',
      'flows/good/sub/step.yaml': 'step\n',
      'flows/pipe/main.yaml': 'pipe\n',
    });
    expect(serviceHolds(MARKER)).toBe(false);
    expect(state.warnings(engine.repoId)).toEqual([
      { flowPath: 'flows/good', path: 'key', warning: 'symlink' },
      { flowPath: 'flows/good', path: 'ssh', warning: 'symlink' },
      { flowPath: 'flows/good', path: 'sub/deeper', warning: 'symlink' },
      { flowPath: 'flows/pipe', path: 'fifo', warning: 'special' },
      { flowPath: 'flows/stolen', path: '', warning: 'symlink' },
    ]);
    expect(engine.status().counts.pending).toBe(0);

    // As `flowsync start <repo> --url <service>` would have left the config: status lists what the config names.
    mkdirSync(join(home, '.config/flowsync'), { recursive: true });
    writeFileSync(
      join(home, '.config/flowsync/config.json'),
      JSON.stringify({ serviceUrl: svc.url, repositories: [{ path: repo.root }] }),
    );
    const status = await runFlowsync(['status'], { env: userEnv(home, svc) });
    expect(status.code).toBe(0);
    expect(status.stdout).toContain('not sent: flows/good/key: a symbolic link: not followed\n');
    expect(status.stdout).toContain('not sent: flows/good/ssh: a symbolic link: not followed\n');
    expect(status.stdout).toContain('not sent: flows/pipe/fifo: a FIFO, socket or device: not read\n');
    expect(status.stdout).toContain('not sent: flows/good/sub/deeper: a symbolic link: not followed\n');
    expect(status.stdout).toContain('not sent: flows/stolen: a symbolic link: not followed\n');

    // The targets change while the agent watches: a new key, an edited one. Then an own file changes, so a round
    // runs after the targets' changes; it carries the own file and nothing of the targets.
    const later = `LATER-${MARKER}`;
    appendFileSync(join(ssh, 'id_rsa'), `${later}\n`);
    writeFileSync(join(ssh, 'id_ed25519'), `${later}\n`);
    repo.write('flows/good/main.yaml', 'steps: [own, edited]\n');
    await eventually(() => expect(stored()['flows/good/main.yaml']).toBe('steps: [own, edited]\n'));
    repo.write('flows/good/sub/step.yaml', 'step 2\n');
    await eventually(() => expect(stored()['flows/good/sub/step.yaml']).toBe('step 2\n'));
    expect(serviceHolds(later)).toBe(false);
    expect(Object.keys(stored())).toHaveLength(3);
  });

  // A file swapped for a link is on disk, not sent: the service keeps the version it had (issue 36, only a file gone
  // from disk is a deletion); what is below a folder swapped for a link is not in the repository any more: gone.
  it('keeps the old version of a file swapped for a link to the secret, drops a folder swapped for a link to ~/.ssh', async () => {
    repo = makeRepo({
      'flows/a/main.yaml': 'main\n',
      'flows/a/deploy.key': 'not a key yet\n',
      'flows/a/conf/app.yaml': 'app\n',
      'flows/b/flow.yaml': 'b\n',
    });
    await start();
    expect(Object.keys(stored())).toHaveLength(4);

    repo.remove('flows/a/deploy.key');
    link(join(ssh, 'id_rsa'), 'flows/a/deploy.key');
    renameSync(join(repo.root, 'flows/a/conf'), join(repo.dir, 'conf-away'));
    link(ssh, 'flows/a/conf');
    repo.remove('flows/b');
    link(ssh, 'flows/b');
    const kept = { 'flows/a/deploy.key': 'not a key yet\n' };
    await eventually(() => expect(stored()).toEqual({ 'flows/a/main.yaml': 'main\n', ...kept }));
    appendFileSync(join(ssh, 'id_rsa'), 'changed\n');
    repo.write('flows/a/main.yaml', 'main 2\n');
    await eventually(() => expect(stored()).toEqual({ 'flows/a/main.yaml': 'main 2\n', ...kept }));
    expect(serviceHolds(MARKER)).toBe(false);
    expect(harness!.state.warnings(harness!.engine.repoId)).toEqual([
      { flowPath: 'flows/a', path: 'conf', warning: 'symlink' },
      { flowPath: 'flows/a', path: 'deploy.key', warning: 'symlink' },
      { flowPath: 'flows/b', path: '', warning: 'symlink' },
    ]);
  });
});

describe('a flow root that is a link', () => {
  it('is refused with a message naming it; nothing under it is scanned, watched or sent', async () => {
    repo = makeRepo({ 'flows/own/main.yaml': 'own\n' });
    mkdirSync(join(ssh, 'keys'));
    writeFileSync(join(ssh, 'keys/id_rsa'), `${MARKER}\n`);
    link(ssh, 'linked');
    const { engine, state } = await start(['flows', 'linked']);
    expect(stored()).toEqual({ 'flows/own/main.yaml': 'own\n' });
    expect(engine.status().message).toBe(
      'the flow folder linked is a symbolic link: not followed, nothing under it is synced',
    );
    expect(state.warnings(engine.repoId)).toEqual([{ flowPath: 'linked', path: '', warning: 'symlink' }]);

    appendFileSync(join(ssh, 'keys/id_rsa'), 'changed\n');
    writeFileSync(join(ssh, 'keys/new'), `${MARKER}\n`);
    repo.write('flows/own/main.yaml', 'own 2\n');
    await eventually(() => expect(stored()).toEqual({ 'flows/own/main.yaml': 'own 2\n' }));
    expect(serviceHolds(MARKER)).toBe(false);
    expect(engine.status().message).toContain('linked is a symbolic link');
  });

  it('is refused when the flow root is swapped for a link while watching: its files leave the service', async () => {
    repo = makeRepo({ 'flows/a/main.yaml': 'a\n', 'flows/b/main.yaml': 'b\n' });
    const { engine, state } = await start();
    expect(Object.keys(stored())).toHaveLength(2);
    renameSync(join(repo.root, 'flows'), join(repo.dir, 'flows-away'));
    mkdirSync(join(ssh, 'a'));
    writeFileSync(join(ssh, 'a/main.yaml'), `${MARKER}\n`);
    link(ssh, 'flows');
    await eventually(() => expect(stored()).toEqual({}));
    await eventually(() =>
      expect(engine.status().message).toBe(
        'the flow folder flows is a symbolic link: not followed, nothing under it is synced',
      ),
    );
    expect(state.warnings(engine.repoId)).toEqual([{ flowPath: 'flows', path: '', warning: 'symlink' }]);
    appendFileSync(join(ssh, 'a/main.yaml'), 'changed\n');
    // Back to a real folder: synced again, the refusal gone.
    repo.remove('flows');
    renameSync(join(repo.dir, 'flows-away'), join(repo.root, 'flows'));
    await eventually(() =>
      expect(stored()).toEqual({ 'flows/a/main.yaml': 'a\n', 'flows/b/main.yaml': 'b\n' }),
    );
    await eventually(() => expect(engine.status().message).toBeNull());
    expect(state.warnings(engine.repoId)).toEqual([]);
    expect(serviceHolds(MARKER)).toBe(false);
  });
});

describe('a symlink loop', () => {
  it('does not keep the start from finishing', async () => {
    repo = makeRepo({ 'flows/loop/main.yaml': 'loop\n', 'flows/other/main.yaml': 'other\n' });
    link('..', 'flows/loop/up');
    link('../loop', 'flows/loop/self');
    link('.', 'flows/loop/here');
    await start();
    expect(stored()).toEqual({ 'flows/loop/main.yaml': 'loop\n', 'flows/other/main.yaml': 'other\n' });
    expect(harness!.state.warnings(harness!.engine.repoId).map((w) => w.path)).toEqual([
      'here',
      'self',
      'up',
    ]);
    // Still watching after the start: an edit arrives.
    repo.write('flows/loop/main.yaml', 'loop 2\n');
    await eventually(() => expect(stored()['flows/loop/main.yaml']).toBe('loop 2\n'));
  });
});

describe('a FIFO', () => {
  it('never blocks the reader: a file swapped for a FIFO, a link or a linked folder after it was hashed', async () => {
    repo = makeRepo({
      'flows/a/main.yaml': 'main\n',
      'flows/a/pipe.yaml': 'a file for now\n',
      'flows/a/key.yaml': 'a file for now\n',
      'flows/a/sub/x.yaml': 'x\n',
    });
    mkdirSync(join(ssh, 'sub'));
    writeFileSync(join(ssh, 'sub/x.yaml'), `${MARKER}\n`);
    const hasher = new Hasher();
    try {
      const paths = ['flows/a/main.yaml', 'flows/a/pipe.yaml', 'flows/a/key.yaml', 'flows/a/sub/x.yaml'];
      const first = await hasher.hash(repo.root, paths, true);
      expect(first.map((read) => !read.missing && read.content)).toEqual([
        'main\n',
        'a file for now\n',
        'a file for now\n',
        'x\n',
      ]);
      // Between the hash and the re-read at upload time the files are swapped.
      repo.remove('flows/a/pipe.yaml');
      mkfifo('flows/a/pipe.yaml');
      repo.remove('flows/a/key.yaml');
      link(join(ssh, 'id_rsa'), 'flows/a/key.yaml');
      repo.remove('flows/a/sub');
      link(join(ssh, 'sub'), 'flows/a/sub');
      const again = await hasher.hash(repo.root, paths, true);
      expect(again[0]).toMatchObject({ missing: false, content: 'main\n' });
      expect(again[1]).toMatchObject({ missing: false, warning: 'special', content: null });
      expect(again[2]).toMatchObject({ missing: false, warning: 'symlink', content: null });
      // The file is not in the repository any more: what is below a link is not there.
      expect(again[3]).toMatchObject({ missing: true });
      expect(JSON.stringify(again)).not.toContain(MARKER);
    } finally {
      for (const fifo of fifos) release(fifo);
      await hasher.close();
    }
  });
});
