import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import {
  existsSync,
  linkSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { describeFileWarning } from '../../src/protocol/index.ts';
import { startEngine, type EngineHarness } from '../support/engine.ts';
import { diskTree, eventually, makeRepo, serviceTree, type TestRepo } from '../support/repo.ts';
import { startTestService, type TestService } from '../support/service.ts';

/**
 * The attack of issue 20, finding 2: another local user who can write in a shared checkout swaps a folder of a
 * flow for a link to the victim's ~/.ssh and back, again and again, while the agent reads the flow's files. The
 * folders on the way were checked, then the file opened by path: a swap in between was followed. And a hard link
 * in a flow to the victim's 0600 file was read like any file. Not one byte of the target may reach the service.
 */
const MARKER = `CANARY-${randomUUID()}`;
/** How long the racer swaps (the report's attack got the key out twice in 20 s). */
const RACE_MS = 20_000;
const NAMES = Array.from({ length: 64 }, (_, index) => `step-${String(index).padStart(2, '0')}.yaml`);

let svc: TestService;
let repo: TestRepo;
/** Stands in for ~/.ssh: outside the repository, files with the same names as the flow's, holding the marker. */
let canary: string;
let harness: EngineHarness | null = null;

beforeEach(async () => {
  svc = await startTestService();
  canary = mkdtempSync(join(tmpdir(), 'flowsync-canary-'));
  for (const name of NAMES) writeFileSync(join(canary, name), `-----BEGIN ${MARKER}-----\n`);
  writeFileSync(join(canary, 'id_rsa'), `-----BEGIN ${MARKER}-----\n`);
});
afterEach(async () => {
  await harness?.close();
  harness = null;
  repo?.cleanup();
  rmSync(canary, { recursive: true, force: true });
  await svc.close();
});

/** Whether the marker's bytes are anywhere the service or the agent keeps anything. */
function anywhere(marker: string): string[] {
  const files = [svc.dbPath, `${svc.dbPath}-wal`, join(repo.dir, 'state.db'), join(repo.dir, 'state.db-wal')];
  const found = files.filter((file) => existsSync(file) && readFileSync(file).includes(marker));
  if (svc.logs.some((line) => line.includes(marker))) found.push('service log');
  return found;
}

/**
 * A child process that, for `ms`, swaps `flows/x/sub` for a link to the canary folder and back (each rename
 * atomic, 1 ms each way), and rewrites a few of the real folder's files every turn so that the agent reads again.
 */
function race(ms: number): Promise<number> {
  const sub = join(repo.root, 'flows/x/sub');
  const script = `
    const fs = require('node:fs');
    const [sub, realAway, linkAway, ms, ...names] = process.argv.slice(1);
    const pause = new Int32Array(new SharedArrayBuffer(4));
    const end = Date.now() + Number(ms);
    let turn = 0;
    while (Date.now() < end) {
      turn++;
      for (let i = 0; i < 4; i++) fs.writeFileSync(sub + '/' + names[(turn * 4 + i) % names.length], 'real ' + turn + '\\n');
      fs.renameSync(sub, realAway);
      fs.renameSync(linkAway, sub);
      Atomics.wait(pause, 0, 0, 1);
      fs.renameSync(sub, linkAway);
      fs.renameSync(realAway, sub);
      Atomics.wait(pause, 0, 0, 1);
    }
    process.stdout.write(String(turn));
  `;
  symlinkSync(canary, join(repo.dir, 'sub-link'));
  const child = spawn(
    process.execPath,
    ['-e', script, sub, join(repo.dir, 'sub-real'), join(repo.dir, 'sub-link'), String(ms), ...NAMES],
    { stdio: ['ignore', 'pipe', 'inherit'] },
  );
  let out = '';
  child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
  return new Promise((resolve, reject) =>
    child.once('exit', (code) =>
      code === 0 ? resolve(Number(out)) : reject(new Error(`racer exited ${code}`)),
    ),
  );
}

describe('a folder swapped for a link to ~/.ssh and back, in a tight loop, while the agent reads', () => {
  it('sends not one byte of what the link points to', { timeout: 90_000 }, async () => {
    repo = makeRepo({
      'flows/x/main.yaml': 'main\n',
      ...Object.fromEntries(NAMES.map((name) => [`flows/x/sub/${name}`, 'real 0\n'])),
    });
    harness = startEngine(repo, svc.url, svc.tokens.user);
    await harness.engine.start();
    expect(Object.keys(serviceTree(svc.read, 'acme', 'app'))).toHaveLength(NAMES.length + 1);

    const turns = await race(RACE_MS);
    expect(turns).toBeGreaterThan(100);
    // The racer left the real folder in place: the agent ends in sync with it.
    await eventually(() => expect(serviceTree(svc.read, 'acme', 'app')).toEqual(diskTree(repo.root)), 30_000);
    expect(anywhere(MARKER)).toEqual([]);
  });
});

describe('a hard link in a flow to a file outside the repository', () => {
  it('is not sent, and is listed with its reason', async () => {
    repo = makeRepo({ 'flows/h/main.yaml': 'main\n' });
    // The victim's 0600 key, linked into the flow (by another user where protected_hardlinks is 0; root here).
    const key = join(repo.dir, 'id_rsa');
    writeFileSync(key, `-----BEGIN ${MARKER}-----\n`, { mode: 0o600 });
    mkdirSync(join(repo.root, 'flows/h/keys'));
    linkSync(key, join(repo.root, 'flows/h/keys/deploy.key'));
    harness = startEngine(repo, svc.url, svc.tokens.user);
    const { engine, state } = harness;
    await engine.start();

    expect(serviceTree(svc.read, 'acme', 'app')).toEqual({ 'flows/h/main.yaml': 'main\n' });
    expect(state.warnings(engine.repoId)).toEqual([
      { flowPath: 'flows/h', path: 'keys/deploy.key', warning: 'hardlink' },
    ]);
    expect(describeFileWarning('hardlink')).toBe('hard link: not sent');
    // An edit of the key (through its other name) is not sent either.
    writeFileSync(key, `-----BEGIN ${MARKER}-----\nchanged\n`);
    repo.write('flows/h/main.yaml', 'main 2\n');
    await eventually(() =>
      expect(serviceTree(svc.read, 'acme', 'app')).toEqual({ 'flows/h/main.yaml': 'main 2\n' }),
    );
    expect(anywhere(MARKER)).toEqual([]);
  });

  it('does not stop a .gitignore with a second hard link from ignoring what it names', async () => {
    repo = makeRepo({ 'flows/h/main.yaml': 'main\n', 'flows/h/local.env': `TOKEN=${MARKER}\n` });
    writeFileSync(join(repo.dir, 'shared.gitignore'), '*.env\n');
    linkSync(join(repo.dir, 'shared.gitignore'), join(repo.root, 'flows/h/.gitignore'));
    harness = startEngine(repo, svc.url, svc.tokens.user);
    await harness.engine.start();
    expect(serviceTree(svc.read, 'acme', 'app')).toEqual({ 'flows/h/main.yaml': 'main\n' });
    expect(anywhere(MARKER)).toEqual([]);
  });
});
