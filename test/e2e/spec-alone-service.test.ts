import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildRenderer, launchChromium } from '../support/browser.ts';
import { startPlatform, type PlatformService } from '../support/platform.ts';
import { makeRepo, type TestRepo } from '../support/repo.ts';
import type { TestService } from '../support/service.ts';
import { openWindow, type OpenWindow } from '../support/window.ts';

/**
 * Issue 37: on a service of the spec alone (one answering as the spec's platform does), the window's Settings says
 * once what that service lacks, where the service in use is named.
 */
const SLOW = { timeout: 30_000 };

let browser: Browser;
let platform: PlatformService;
let repo: TestRepo;
let win: OpenWindow | null = null;

beforeAll(async () => {
  buildRenderer();
  browser = await launchChromium();
  platform = await startPlatform();
}, 120_000);
afterAll(async () => {
  await win?.close();
  await browser?.close();
  await platform?.close();
  repo?.cleanup();
});

describe('Settings, on a service of the spec alone', () => {
  it('says what it lacks: no history, no conflict check (the last writer wins), deletions by full listing', async () => {
    repo = makeRepo({ 'flows/ci/build.yml': 'build: 1\n' });
    // The window's fixture starts an agent on a service it is given: the platform, with no admin token.
    const service = {
      url: platform.url,
      tokens: { user: platform.token, admin: '' },
    } as unknown as TestService;
    win = await openWindow(browser, service, repo);
    await win.page.getByRole('tab', { name: 'Settings' }).click();
    const limits = win.page.getByTestId('settings-service-limits');
    await expect.poll(() => limits.count(), SLOW).toBe(1);
    const text = await limits.textContent();
    expect(text).toContain('keeps no history');
    expect(text).toContain('the last writer wins');
    expect(text).toContain('full listings');
  }, 120_000);
});
