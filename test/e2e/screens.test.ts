import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildRenderer, launchChromium } from '../support/browser.ts';
import { pictures, seriousViolations } from '../support/pictures.ts';
import { SAMPLE_COUNTS, makeSampleRepo } from '../support/sample-repo.ts';
import { startTestService, type TestService } from '../support/service.ts';
import { seedViewerTasks } from '../support/tracker.ts';
import { addRepository, openWindow, type OpenWindow } from '../support/window.ts';
import type { TestRepo } from '../support/repo.ts';

/** The four screens with realistic data: each one's picture, and an accessibility check (test/support/pictures.ts). */
const IMAGES = pictures('screens');
const SECRET = 'lin_api_ada_personal_key_0042';
const SLOW = { timeout: 30_000 };

let browser: Browser;
let svc: TestService;
let repo: TestRepo;
let win: OpenWindow;
let page: Page;

beforeAll(async () => {
  buildRenderer();
  browser = await launchChromium();
  svc = await startTestService();
  repo = makeSampleRepo();
  win = await openWindow(browser, svc, repo);
  page = win.page;
  await addRepository(page, repo.root, SAMPLE_COUNTS);
  await seedViewerTasks(svc, SECRET, 12);
}, 120_000);
afterAll(async () => {
  IMAGES.cleanup();
  await win?.close();
  await svc?.close();
  repo?.cleanup();
  await browser?.close();
});

describe('the four screens', () => {
  it('Sync: flows, files not sent and recent activity', async () => {
    repo.write('flows/reports/summary.md', '# Summary\n\nRevenue is up.\n');
    repo.write('flows/onboarding/steps.json', '{"welcome": {"next": null}}\n');
    const activity = page.getByRole('list', { name: 'Recent activity' });
    await expect.poll(() => activity.textContent(), SLOW).toContain('flows/onboarding/steps.json');
    await expect.poll(() => activity.textContent(), SLOW).toContain('flows/reports/summary.md');
    await page.getByRole('button', { name: 'billing' }).click();
    await expect
      .poll(() => page.getByRole('list', { name: 'Files of billing' }).textContent(), SLOW)
      .toContain('logo.png not sent');
    await IMAGES.take(page, 'sync');
    expect(await seriousViolations(page)).toEqual([]);
  });

  it('Tasks: my open tasks, one open beside the list', async () => {
    await page.getByRole('tab', { name: 'Settings' }).click();
    await page.getByLabel('New personal API key').fill(SECRET);
    await page.getByRole('button', { name: 'Save key' }).click();
    await expect.poll(() => page.getByTestId('api-key').textContent(), SLOW).toContain('lin_…0042');
    await page.getByRole('tab', { name: 'Tasks' }).click();
    await expect
      .poll(() => page.getByTestId('you').textContent(), SLOW)
      .toContain('You are Ada Lovelace (ada@example.com) in the tracker.');
    await page.getByRole('button', { name: 'Open ENG-110', exact: true }).click();
    await expect
      .poll(() => page.getByTestId('task-detail').textContent(), SLOW)
      .toContain('ENG-110 · In Progress');
    await expect.poll(() => page.getByLabel('Status').locator('option').count(), SLOW).toBe(4);
    await IMAGES.take(page, 'tasks');
    expect(await seriousViolations(page)).toEqual([]);
  });

  it('Repo config: the form with a saved config', async () => {
    await page.getByRole('tab', { name: 'Repo config' }).click();
    await page.getByLabel('Editor').fill('code');
    await page.getByLabel('Artifact folder (artifact_config.dir)').fill('dist');
    await page.getByLabel('Model').fill('large');
    await page.getByLabel('Permission mode').selectOption('plan');
    await page.getByRole('button', { name: 'Add a background job' }).click();
    await page.getByLabel('Name').fill('dev');
    await page.getByLabel('Command').fill('npm run dev');
    await page.getByLabel('Description').fill('The app on port 3000');
    await page.getByRole('button', { name: 'Save' }).click();
    await expect.poll(() => page.getByRole('status').textContent(), SLOW).toContain('and the service');
    await IMAGES.take(page, 'repo-config');
    expect(await seriousViolations(page)).toEqual([]);
  });

  it('Settings', async () => {
    await page.getByRole('tab', { name: 'Settings' }).click();
    await expect.poll(() => page.getByTestId('api-key').textContent(), SLOW).toContain('lin_…0042');
    await expect
      .poll(() => page.getByTestId('you').textContent(), SLOW)
      .toContain('You are Ada Lovelace (ada@example.com) in the tracker.');
    await IMAGES.take(page, 'settings');
    expect(await seriousViolations(page)).toEqual([]);
  });
});
