import { spawnSync } from 'node:child_process';
import {
  chmodSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CHECKOUT_BIN, REGISTER_TSX } from '../support/cli.ts';
import { createUnixUser, type UnixUser } from '../support/unix-user.ts';

/**
 * tsx keeps the code it compiled in `<tmpdir>/tsx-<uid>` and runs what it finds there. With TMPDIR unset (Linux's
 * default) that is `/tmp/tsx-<uid>`, a name another local user can take first and fill. Here `shared` plays /tmp
 * (1777, as /tmp is) so the machine's own /tmp/tsx-0 is left alone; the victim is root running the checkout's
 * `flowsync`, the attacker a real second user.
 */
const MAIN = new URL('../../src/cli/main.ts', import.meta.url);
const TSX_API = join(dirname(createRequire(MAIN).resolve('tsx/package.json')), 'dist/esm/api/index.mjs');

let attacker: UnixUser;
let dir: string;
let shared: string;
let marker: string;

beforeAll(() => {
  attacker = createUnixUser();
  dir = mkdtempSync(join(tmpdir(), 'flowsync-tsx-cache-'));
  chmodSync(dir, 0o755);
  shared = join(dir, 'tmp');
  mkdirSync(shared);
  chmodSync(shared, 0o1777);
  marker = join(dir, 'marker');

  // The cache a run of the sources leaves (the keys hash the sources, public to anyone who can read the checkout):
  // made as bin/flowsync.js did before it turned the cache off, register() and then main.ts.
  const made = join(dir, 'made');
  mkdirSync(made);
  const maker = join(dir, 'make-cache.mjs');
  writeFileSync(
    maker,
    `const { register } = await import(${JSON.stringify(TSX_API)});\nregister();\nawait import(${JSON.stringify(MAIN.href)});\n`,
  );
  const env: NodeJS.ProcessEnv = { ...process.env, TMPDIR: made };
  delete env.TSX_DISABLE_CACHE;
  const run = spawnSync(process.execPath, [maker, '--help'], { env, encoding: 'utf8' });
  expect(run.status, run.stderr).toBe(0);
  const cache = join(made, `tsx-${process.getuid!()}`);

  // Every entry poisoned: its module, when run, first leaves a marker as the user who ran it.
  const poisoned = join(dir, 'poisoned');
  mkdirSync(poisoned, { mode: 0o755 });
  const entries = readdirSync(cache);
  expect(entries.length).toBeGreaterThan(0);
  for (const entry of entries) {
    const compiled = JSON.parse(readFileSync(join(cache, entry), 'utf8')) as { code: string };
    compiled.code = `process.getBuiltinModule('node:fs').appendFileSync(${JSON.stringify(marker)}, 'ran\\n');${compiled.code}`;
    writeFileSync(join(poisoned, entry), JSON.stringify(compiled), { mode: 0o644 });
  }
  // The attacker takes the victim's cache folder name first and fills it.
  attacker.run('mkdir', ['-m', '755', join(shared, `tsx-${process.getuid!()}`)]);
  attacker.run('sh', ['-c', `cp "$0"/* "$1"/`, poisoned, join(shared, `tsx-${process.getuid!()}`)]);
});

afterAll(async () => {
  await attacker?.remove();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

// Each way a checkout runs the sources: `flowsync`/`npm start` (bin/flowsync.js), and `npm run bench`, electron/main.mjs
// and the tests' own children (`node --import scripts/register-tsx.mjs`), here with main.ts as the program.
const RUNS = [
  { name: 'bin/flowsync.js', args: [CHECKOUT_BIN, '--help'] },
  {
    name: 'node --import scripts/register-tsx.mjs',
    args: ['--import', REGISTER_TSX, fileURLToPath(MAIN), '--help'],
  },
];

describe("another user's tsx cache", () => {
  it.each(RUNS)('is never run by $name: the help is printed and no poisoned module ran', ({ args }) => {
    // bin/flowsync.js runs the build while it is current: made to run the sources, as after an edit.
    const env: NodeJS.ProcessEnv = { ...process.env, TMPDIR: shared, FLOWSYNC_FROM_SOURCES: '1' };
    delete env.TSX_DISABLE_CACHE;
    const run = spawnSync(process.execPath, args, { env, encoding: 'utf8' });
    expect(run.stdout).toContain('Usage: flowsync');
    expect(run.status, run.stderr).toBe(0);
    expect(existsSync(marker)).toBe(false);
  });
});
