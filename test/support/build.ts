import { execFileSync } from 'node:child_process';
import { mkdirSync, readdirSync, rmSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

/** Written into dist/bin after a build: it is as new as the sources it was built from. */
const STAMP = join(ROOT, 'dist/bin/.built');
const LOCK = join(ROOT, 'dist/.build-lock');

/**
 * Builds the `flowsync` command into dist/ (`npm run build`) unless the build is newer than every source: the
 * tests run it as the package and the desktop app do (test/support/cli.ts says why). Called once per run, by the
 * projects' global set-up; under a lock, since both projects may ask at once.
 */
export function buildCommand(): void {
  mkdirSync(join(ROOT, 'dist'), { recursive: true });
  withLock(LOCK, () => {
    const built = statSync(STAMP, { throwIfNoEntry: false })?.mtimeMs ?? 0;
    if (built > newestSource(['src', 'electron', 'scripts'])) return;
    // The build writes the stamp itself (scripts/build-stamp.mjs), dated when it started.
    execFileSync(process.execPath, [join(ROOT, 'scripts/build.mjs')], { cwd: ROOT, stdio: 'inherit' });
  });
}

/** The newest modification among the given folders' files (recursively) and package-lock.json. */
export function newestSource(folders: readonly string[]): number {
  let newest = 0;
  const walk = (folder: string) => {
    for (const entry of readdirSync(folder, { withFileTypes: true })) {
      const path = join(folder, entry.name);
      if (entry.isDirectory()) {
        if (entry.name !== 'dist' && entry.name !== 'node_modules') walk(path);
      } else newest = Math.max(newest, statSync(path).mtimeMs);
    }
  };
  for (const folder of folders) walk(join(ROOT, folder));
  return Math.max(newest, statSync(join(ROOT, 'package-lock.json')).mtimeMs);
}

/** Runs `work` while holding a lock folder; waits (up to two minutes: a build on a loaded machine) for it. */
export function withLock(lock: string, work: () => void): void {
  const deadline = Date.now() + 120_000;
  for (;;) {
    try {
      mkdirSync(lock);
      break;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
      // A lock left by a killed run is older than any build takes.
      if (Date.now() - (statSync(lock, { throwIfNoEntry: false })?.mtimeMs ?? Date.now()) > 120_000)
        rmSync(lock, { recursive: true, force: true });
      if (Date.now() > deadline) throw new Error(`${lock} is still held after two minutes`);
      Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 100);
    }
  }
  try {
    work();
  } finally {
    rmSync(lock, { recursive: true, force: true });
  }
}
