import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildRenderer, launchChromium } from '../support/browser.ts';
import { pictures, seriousViolations } from '../support/pictures.ts';
import { makeRepo, serviceTree, type TestRepo } from '../support/repo.ts';
import { startTestService, type TestService } from '../support/service.ts';
import { openWindow, type OpenWindow } from '../support/window.ts';

/**
 * Issue 25, item 3, in Chromium as a user meets it: `/` refused at Add folder; a folder without `flows/` says it
 * has nothing to sync and where to fix it; its flow folders set in Settings, and their files on the service.
 */
const SLOW = { timeout: 30_000 };
/** Each look inside a poll is short, so that the poll's 30 s are retries (an element not there yet is looked for again). */
const SHORT = { timeout: 1000 };

let browser: Browser;
let svc: TestService;
let repo: TestRepo;
let win: OpenWindow;
let page: Page;
const shots = pictures('flow-folders');

beforeAll(async () => {
  buildRenderer();
  browser = await launchChromium();
  svc = await startTestService();
  // Its flows are in pipelines/, not flows/ (a folder the user names in Settings).
  repo = makeRepo({ 'pipelines/deploy/main.yaml': 'steps: [build, ship]\n', 'README.md': '# notes\n' });
  win = await openWindow(browser, svc, repo);
  page = win.page;
}, 120_000);
afterAll(async () => {
  await win?.close();
  await svc?.close();
  repo?.cleanup();
  await browser?.close();
  shots.cleanup();
});

const card = () => page.getByRole('listitem', { name: 'local/repo' });

describe('Add folder and a folder without flows/', () => {
  it('refuses / in one line', async () => {
    await page.getByLabel('Repository folder').fill('/');
    await page.getByRole('button', { name: 'Add folder' }).click();
    await expect
      .poll(() => page.getByRole('alert').first().textContent(SHORT), SLOW)
      .toBe('/ is the whole disk, not a repository: give the folder of one repository, e.g. ~/code/app.');
    expect(await page.locator('li.repository').count()).toBe(0);
  });

  it('keeps a folder without flows/, and its card says there is nothing to sync and where to fix it', async () => {
    await page.getByLabel('Repository folder').fill(repo.root);
    await page.getByRole('button', { name: 'Add folder' }).click();
    await expect
      .poll(() => card().textContent(SHORT), SLOW)
      .toContain(`no flows/ folder in ${repo.root}: nothing to sync; set its flow folders in Settings`);
    await shots.take(page, 'nothing-to-sync');
    expect(await seriousViolations(page)).toEqual([]);
  });

  it('a flow folder outside the repository is refused in Settings', async () => {
    await page.getByRole('tab', { name: 'Settings' }).click();
    const form = page.getByRole('form', { name: 'Settings of local/repo' });
    await form.getByLabel('Flow folders').fill('../elsewhere');
    await form.getByRole('button', { name: 'Save' }).click();
    await expect
      .poll(() => form.getByRole('alert').textContent(SHORT), SLOW)
      .toContain('has a .. segment: give a folder inside the repository');
  });

  it('its flow folders set in Settings: their files are on the service, and the card counts them', async () => {
    const form = page.getByRole('form', { name: 'Settings of local/repo' });
    await form.getByLabel('Flow folders').fill('pipelines');
    await form.getByRole('button', { name: 'Save' }).click();
    await expect
      .poll(() => form.getByRole('status').textContent(SHORT), SLOW)
      .toContain('syncing pipelines/');
    await expect
      .poll(() => serviceTree(svc.read, 'local', 'repo'), SLOW)
      .toEqual({ 'pipelines/deploy/main.yaml': 'steps: [build, ship]\n' });
    expect(await seriousViolations(page)).toEqual([]);
    // Kept in the config file, for the next start.
    const config = JSON.parse(readFileSync(join(repo.dir, 'home/.config/flowsync/config.json'), 'utf8')) as {
      repositories: { path: string; flowRoots: string[] }[];
    };
    expect(config.repositories).toMatchObject([{ path: repo.root, flowRoots: ['pipelines'] }]);

    await page.getByRole('tab', { name: 'Sync' }).click();
    await expect
      .poll(() => card().getByTestId('counts').textContent(SHORT), SLOW)
      .toContain('1 flow · 1 file');
    expect(await card().textContent()).not.toContain('nothing to sync');
  });

  it('an owner and name set in Settings: the card offers to sync under them', async () => {
    await page.getByRole('tab', { name: 'Settings' }).click();
    const form = page.getByRole('form', { name: 'Settings of local/repo' });
    await form.getByLabel('Owner').fill('acme');
    await form.getByLabel('Name').fill('notes');
    await form.getByRole('button', { name: 'Save' }).click();
    await expect.poll(() => form.getByRole('status').count(), SLOW).toBe(1);
    await page.getByRole('tab', { name: 'Sync' }).click();
    await card().getByRole('button', { name: 'Sync as acme/notes' }).click();
    await expect
      .poll(() => serviceTree(svc.read, 'acme', 'notes'), SLOW)
      .toEqual({ 'pipelines/deploy/main.yaml': 'steps: [build, ship]\n' });
    await expect.poll(() => page.getByRole('listitem', { name: 'acme/notes' }).count(), SLOW).toBe(1);
  });
});
