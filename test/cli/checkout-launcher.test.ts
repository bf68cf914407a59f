import { execFileSync, spawnSync } from 'node:child_process';
import {
  cpSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  statSync,
  symlinkSync,
  utimesSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

/**
 * Issue 42: in a clone, `flowsync` (bin/flowsync.js, which the README's set-up links onto PATH) compiled the sources
 * through tsx at every start, 2.4-3.3 s of CPU for `status` against 0.1 s from the build `npm ci` had just made. It
 * runs the build now while the build is current, and the sources once one is newer, saying why once. On a copy of
 * the clone (its own build, made by scripts/build.mjs as `npm ci` makes it), so that this checkout's dist/ and
 * sources are left alone; the copy's help text is changed in its sources to tell which of the two ran.
 */
const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const PROGRAM = 'src/cli/program.ts';
const DESCRIPTION = 'Keep flow-definition folders in sync with a remote-function service.';
const EDITED = 'Keep flow-definition folders in sync (FROM THE SOURCES).';

let work: string;
let clone: string;

beforeAll(() => {
  work = mkdtempSync(join(tmpdir(), 'flowsync-checkout-'));
  clone = join(work, 'clone');
  for (const path of [
    'bin',
    'scripts',
    'src',
    'electron',
    'package.json',
    'package-lock.json',
    'tsconfig.json',
  ])
    cpSync(join(ROOT, path), join(clone, path), { recursive: true });
  symlinkSync(join(ROOT, 'node_modules'), join(clone, 'node_modules'));
  execFileSync(process.execPath, [join(clone, 'scripts/build.mjs')], { cwd: clone, stdio: 'inherit' });
}, 180_000);
afterAll(() => rmSync(work, { recursive: true, force: true }));

function flowsync(args: string[]) {
  const env: NodeJS.ProcessEnv = { ...process.env };
  delete env.FLOWSYNC_FROM_SOURCES;
  const run = spawnSync(process.execPath, [join(clone, 'bin/flowsync.js'), ...args], {
    env,
    encoding: 'utf8',
  });
  expect(run.status, run.stderr).toBe(0);
  return run;
}

/** Edits the clone's help text in its sources, dated `when` (ms). */
function editSources(when: number): void {
  const path = join(clone, PROGRAM);
  writeFileSync(path, readFileSync(path, 'utf8').replace(DESCRIPTION, EDITED));
  utimesSync(path, when / 1000, when / 1000);
}

describe("a clone's bin/flowsync.js", () => {
  it('runs the build while it is current: a source older than the build is not what runs', () => {
    const built = statSync(join(clone, 'dist/bin/.built')).mtimeMs;
    editSources(built - 60_000);
    const run = flowsync(['--help']);
    expect(run.stdout).toContain(DESCRIPTION);
    expect(run.stderr).toBe('');
  });

  it('runs the sources once one is newer than the build, and says why once', () => {
    editSources(Date.now());
    const first = flowsync(['--help']);
    expect(first.stdout).toContain(EDITED);
    expect(first.stderr).toBe(
      'flowsync: running the TypeScript sources through tsx, which compiles them at every start (slower): ' +
        `${PROGRAM} is newer than the build (dist/); \`npm run build\` makes it fast again.\n`,
    );
    const second = flowsync(['--help']);
    expect(second.stdout).toContain(EDITED);
    expect(second.stderr).toBe('');
  });

  it('runs the build again after `npm run build`', () => {
    execFileSync(process.execPath, [join(clone, 'scripts/build.mjs')], { cwd: clone, stdio: 'inherit' });
    const run = flowsync(['--help']);
    expect(run.stdout).toContain(EDITED);
    expect(run.stderr).toBe('');
    // The sources are edited back: which one ran is told by the text, and the build still has the edit.
    const path = join(clone, PROGRAM);
    writeFileSync(path, readFileSync(path, 'utf8').replace(EDITED, DESCRIPTION));
    const built = statSync(join(clone, 'dist/bin/.built')).mtimeMs;
    utimesSync(path, (built - 60_000) / 1000, (built - 60_000) / 1000);
    expect(flowsync(['--help']).stdout).toContain(EDITED);
  });
});
