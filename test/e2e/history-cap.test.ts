import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildRenderer, launchChromium } from '../support/browser.ts';
import { seriousViolations } from '../support/pictures.ts';
import { makeRepo, serviceTree, type TestRepo } from '../support/repo.ts';
import { startTestService, type TestService } from '../support/service.ts';
import { addRepository, initGit, openWindow, type OpenWindow } from '../support/window.ts';

/**
 * Issue 41 in the window: a history the service's size cap cut says so ("older versions of this repository were
 * removed at the 1 MiB cap on …"), and a quiet file keeps its versions however busy another file is.
 */
const SLOW = { timeout: 30_000 };

let browser: Browser;
let svc: TestService;
let repo: TestRepo;
let win: OpenWindow;
let page: Page;
const pruneEvery = process.env.FLOWSYNC_HISTORY_PRUNE_MS;

beforeAll(async () => {
  buildRenderer();
  browser = await launchChromium();
  // The service runs in this process: its pruning every 200 ms instead of every hour.
  process.env.FLOWSYNC_HISTORY_PRUNE_MS = '200';
  svc = await startTestService({ retention: { bytes: 1024 * 1024 } });
  repo = makeRepo({ 'flows/ci/quiet.yml': 'quiet: 1\n', 'flows/ci/busy.yml': 'busy: 0\n' });
  initGit(repo);
  win = await openWindow(browser, svc, repo);
  page = win.page;
  await addRepository(page, repo.root, '2 files · 0 pending');
}, 120_000);
afterAll(async () => {
  if (pruneEvery === undefined) delete process.env.FLOWSYNC_HISTORY_PRUNE_MS;
  else process.env.FLOWSYNC_HISTORY_PRUNE_MS = pruneEvery;
  await win?.close();
  await svc?.close();
  repo?.cleanup();
  await browser?.close();
});

describe("the history's cut by the size cap, in the window", () => {
  it('is said in the history, and the quiet file keeps its versions', async () => {
    repo.write('flows/ci/quiet.yml', 'quiet: 2\n');
    await expect
      .poll(() => serviceTree(svc.read, 'acme', 'app')['flows/ci/quiet.yml'], SLOW)
      .toBe('quiet: 2\n');
    // A busy file: seven versions of 300 KiB, 2.1 MiB of history over the 1 MiB cap.
    for (let n = 1; n <= 7; n++) {
      const content = `busy: ${n}\n${'x'.repeat(300 * 1024)}`;
      repo.write('flows/ci/busy.yml', content);
      await expect.poll(() => serviceTree(svc.read, 'acme', 'app')['flows/ci/busy.yml'], SLOW).toBe(content);
    }
    await page.getByRole('button', { name: /(^|\s)ci$/ }).click();
    const files = page.getByRole('list', { name: 'Files of ci' });
    await files.getByRole('button', { name: 'History of quiet.yml' }).click();
    const versions = page.getByRole('table', { name: 'Versions of flows/ci/quiet.yml' });
    await expect.poll(() => versions.getByRole('row').count(), SLOW).toBe(3); // a header, two versions
    // The history is read again when the repository settles: poll until the cut shows.
    await expect
      .poll(async () => {
        await files.getByRole('button', { name: 'History of quiet.yml' }).click();
        await files.getByRole('button', { name: 'History of quiet.yml' }).click();
        return page
          .getByTestId('history-capped')
          .textContent({ timeout: 1000 })
          .catch(() => '');
      }, SLOW)
      .toMatch(
        /^older versions of this repository were removed at the 1 MiB cap on \d{4}-\d\d-\d\d \d\d:\d\d UTC/,
      );
    expect(await versions.getByRole('row').count()).toBe(3);
    expect(await seriousViolations(page)).toEqual([]);
  });
});
