import { chromium, type Browser } from 'playwright-core';
import { build } from 'vite';
import { fileURLToPath } from 'node:url';

/** Debian's Chromium (installed by .ci/run); playwright never downloads a browser here. */
export const CHROMIUM = process.env.FLOWSYNC_CHROMIUM ?? '/usr/bin/chromium';

export function launchChromium(): Promise<Browser> {
  return chromium.launch({
    executablePath: CHROMIUM,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking'],
  });
}

/** Builds the renderer into renderer/dist, the files the bridge serves, as `npm run build:renderer` does. */
export async function buildRenderer(): Promise<void> {
  await build({
    configFile: fileURLToPath(new URL('../../renderer/vite.config.ts', import.meta.url)),
    logLevel: 'warn',
  });
}
