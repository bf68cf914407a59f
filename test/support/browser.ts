import { execFileSync } from 'node:child_process';
import { mkdirSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium, type Browser } from 'playwright-core';

/** Debian's Chromium (installed by .ci/run); playwright never downloads a browser here. */
export const CHROMIUM = process.env.FLOWSYNC_CHROMIUM ?? '/usr/bin/chromium';

export function launchChromium(): Promise<Browser> {
  return chromium.launch({
    executablePath: CHROMIUM,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking'],
  });
}

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

/** Written into renderer/dist after a build: it is as new as the sources it was built from. */
const STAMP = `${ROOT}/renderer/dist/.built`;
const LOCK = `${ROOT}/renderer/.build-lock`;

/**
 * Builds the renderer into renderer/dist, the files the bridge serves, exactly as `npm run build:renderer` does:
 * in its own process, out of vitest's NODE_ENV=test, so the tests see the production bundle users get.
 *
 * The e2e files run in two workers and each asks for a build. A build empties renderer/dist, which would pull the
 * page from under the other file's tests; so one worker builds (under a lock) and the others find the build newer
 * than every source and keep it.
 */
export function buildRenderer(): void {
  withLock(LOCK, () => {
    const built = statSync(STAMP, { throwIfNoEntry: false })?.mtimeMs ?? 0;
    if (built > newestSource()) return;
    execFileSync(
      process.execPath,
      [`${ROOT}/node_modules/vite/bin/vite.js`, 'build', 'renderer', '--logLevel', 'warn'],
      {
        cwd: ROOT,
        env: { ...process.env, NODE_ENV: 'production' },
        stdio: 'inherit',
      },
    );
    writeFileSync(STAMP, '');
  });
}

function newestSource(): number {
  let newest = 0;
  const walk = (folder: string) => {
    for (const entry of readdirSync(folder, { withFileTypes: true })) {
      const path = join(folder, entry.name);
      if (entry.isDirectory()) {
        if (entry.name !== 'dist' && entry.name !== 'node_modules') walk(path);
      } else newest = Math.max(newest, statSync(path).mtimeMs);
    }
  };
  for (const folder of ['renderer', 'src']) walk(join(ROOT, folder));
  return Math.max(newest, statSync(join(ROOT, 'package-lock.json')).mtimeMs);
}

/** Runs `work` while holding a lock folder; waits (up to two minutes: a build on a loaded machine) for it. */
function withLock(lock: string, work: () => void): void {
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
