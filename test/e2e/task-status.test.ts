import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildRenderer, launchChromium } from '../support/browser.ts';
import { seriousViolations } from '../support/pictures.ts';
import { makeRepo, type TestRepo } from '../support/repo.ts';
import { startTestService, type TestService } from '../support/service.ts';
import { VIEWER, deliver, issueCreated } from '../support/tracker.ts';
import { addRepository, initGit, openWindow, type OpenWindow } from '../support/window.ts';

/**
 * Issue 42: with the workflow states cached under the team's key (the README's `"team_id":"ENG"`), the task's
 * Status menu offered only "(unchanged)" and said nothing: the window read them under the tracker team's UUID only.
 */
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
  // Tracker teams are UUIDs; the operator cached ENG's states under its key, and OPS's not at all.
  const eng = '7f3c1e2a-0b4d-4c59-9d7e-3a1f0c2b5e61';
  await deliver(
    svc,
    issueCreated({
      id: 'i-7',
      identifier: 'ENG-7',
      title: 'Fix login',
      state: { name: 'Todo' },
      teamId: eng,
    }),
    eng,
  );
  await deliver(
    svc,
    issueCreated({ id: 'i-8', identifier: 'OPS-8', title: 'Rotate certificates', teamId: 'c0ffee00-ops' }),
    'c0ffee00-ops',
  );
  // The user of the repository's git email (initGit), whom the key saved below is registered to.
  await deliver(svc, { action: 'create', type: 'User', data: VIEWER });
  const cached = await svc.call('svc/tracker/private/workflow_state_cache_upsert', {
    team_id: 'ENG',
    states: [
      { id: 's1', name: 'Todo', normalized_name: 'todo' },
      { id: 's2', name: 'In Review', normalized_name: 'in_review' },
      { id: 's3', name: 'Done', normalized_name: 'done' },
    ],
  });
  expect(cached.statusCode).toBe(200);
  repo = makeRepo({ 'flows/hello/main.yaml': 'hello\n' });
  initGit(repo);
  win = await openWindow(browser, svc, repo);
  page = win.page;
  await addRepository(page, repo.root, '1 flow');
  await page.getByRole('tab', { name: 'Settings' }).click();
  await page.getByLabel('New personal API key').fill('lin_api_task_status_key_0042');
  await page.getByRole('button', { name: 'Save key' }).click();
  await page.getByTestId('api-key').filter({ hasText: '0042' }).waitFor(SLOW);
  await page.getByRole('tab', { name: 'Tasks' }).click();
}, 120_000);
afterAll(async () => {
  await win?.close();
  await svc?.close();
  repo?.cleanup();
  await browser?.close();
});

async function openTask(key: string, words: string): Promise<void> {
  await page.getByLabel('Search the tracker').fill(words);
  await page.getByRole('button', { name: 'Search' }).click();
  await page.getByRole('button', { name: `Open ${key}` }).click();
  await page.getByLabel('Status', { exact: true }).waitFor();
}

const statusOptions = () => page.getByLabel('Status', { exact: true }).locator('option').allTextContents();

describe('a task’s status, with workflow states cached under the team key', () => {
  it('offers the states cached under ENG and saves one', async () => {
    await openTask('ENG-7', 'login');
    await expect.poll(statusOptions, SLOW).toEqual(['(unchanged)', 'Todo', 'In Review', 'Done']);
    await page.getByLabel('Status', { exact: true }).selectOption('In Review');
    await page.getByRole('button', { name: 'Save' }).click();
    await expect.poll(() => page.getByRole('status').textContent(), SLOW).toContain('Updated ENG-7');
    expect(svc.read('SELECT task_key, status FROM tasks')).toEqual([
      { task_key: 'ENG-7', status: 'In Review' },
    ]);
    expect(await seriousViolations(page)).toEqual([]);
  });

  it('says so when no workflow states are cached for the team', async () => {
    await page.getByRole('button', { name: 'Close ENG-7' }).click();
    await openTask('OPS-8', 'certificates');
    await expect
      .poll(() => page.getByTestId('no-states').textContent(), SLOW)
      .toContain('No workflow states cached for team OPS');
    expect(await statusOptions()).toEqual(['(unchanged)']);
    expect(await seriousViolations(page)).toEqual([]);
  });
});
