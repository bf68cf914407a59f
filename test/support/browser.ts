import { execFileSync } from 'node:child_process';
import { statSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { chromium, type Browser } from 'playwright-core';
import { newestSource, withLock } from './build.ts';

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
    if (built > newestSource(['renderer', 'src'])) return;
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
