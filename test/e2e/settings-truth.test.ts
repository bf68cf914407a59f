import type { Browser } from 'playwright-core';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { buildRenderer, launchChromium } from '../support/browser.ts';
import { seriousViolations } from '../support/pictures.ts';
import { makeRepo, type TestRepo } from '../support/repo.ts';
import { startTestService, type TestService } from '../support/service.ts';
import { openWindow, type OpenWindow } from '../support/window.ts';
import { NO_KEYCHAIN } from '../support/agent-process.ts';

/**
 * Issue 25 item 6, Settings said untrue things: a no-keychain warning ("keys cannot be kept") while the token from
 * the environment worked, a Service URL field empty while FLOWSYNC_URL was in force, and Sign out with the embedded
 * service deleted the service's own tokens without a word (the agent signed out of itself).
 */
const SLOW = { timeout: 30_000 };

let browser: Browser;
let svc: TestService;
let repo: TestRepo;
let win: OpenWindow | null = null;

beforeAll(async () => {
  buildRenderer();
  browser = await launchChromium();
  svc = await startTestService();
}, 120_000);
afterAll(async () => {
  await browser?.close();
  await svc?.close();
});
afterEach(async () => {
  await win?.close();
  win = null;
  repo.cleanup();
});

async function openSettings(env: NodeJS.ProcessEnv) {
  repo = makeRepo({ 'flows/ci/build.yml': 'build: 1\n' });
  win = await openWindow(browser, svc, repo, { env });
  await win.page.getByRole('tab', { name: 'Settings' }).click();
  await expect.poll(() => win!.page.getByTestId('service-in-use').textContent(), SLOW).not.toContain('…');
  return win.page;
}

describe('Settings says what is true', () => {
  it('with no keychain and FLOWSYNC_URL and FLOWSYNC_TOKEN set: the service in use and why, and no false alarm', async () => {
    const page = await openSettings({
      ...NO_KEYCHAIN,
      FLOWSYNC_ADMIN_TOKEN: '',
    });
    expect(await page.getByTestId('service-in-use').textContent()).toBe(
      `In use now: ${svc.url}, from FLOWSYNC_URL in the agent's environment, which wins over this field.`,
    );
    expect(await page.getByTestId('keychain').textContent()).toBe(
      'No OS keychain is reachable: the agent uses FLOWSYNC_TOKEN from its environment, and what you type below cannot be kept.',
    );
    expect(await page.getByTestId('keychain').getAttribute('class')).toBe('muted');
    expect(await page.locator('.error').count()).toBe(0);
    expect(await page.getByRole('button', { name: 'Sign out' }).count()).toBe(1);
    expect(await seriousViolations(page)).toEqual([]);
  });

  it('with the embedded service: no Sign out that would delete its own tokens, and the service named', async () => {
    const page = await openSettings({
      FLOWSYNC_URL: '',
      FLOWSYNC_TOKEN: '',
      FLOWSYNC_ADMIN_TOKEN: '',
      FLOWSYNC_EMBEDDED_PORT: '0',
    });
    expect(await page.getByTestId('service-in-use').textContent()).toMatch(
      /^In use now: the embedded service \(http:\/\/127\.0\.0\.1:\d+\)\. A change takes effect at the next start\.$/,
    );
    expect(await page.getByRole('button', { name: 'Sign out' }).count()).toBe(0);
    expect(await seriousViolations(page)).toEqual([]);
  });
});
