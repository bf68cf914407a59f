import { execFileSync } from 'node:child_process';
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

/**
 * Builds the renderer into renderer/dist, the files the bridge serves, exactly as `npm run build:renderer` does:
 * in its own process, out of vitest's NODE_ENV=test, so the tests see the production bundle users get.
 */
export function buildRenderer(): void {
  execFileSync(
    process.execPath,
    [`${ROOT}/node_modules/vite/bin/vite.js`, 'build', 'renderer', '--logLevel', 'warn'],
    {
      cwd: ROOT,
      env: { ...process.env, NODE_ENV: 'production' },
      stdio: 'inherit',
    },
  );
}
