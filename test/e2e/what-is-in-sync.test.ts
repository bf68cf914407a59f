import type { Browser, Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { buildRenderer, launchChromium } from '../support/browser.ts';
import { startFaultProxy, type FaultProxy } from '../support/fault-proxy.ts';
import { SAMPLE_COUNTS, makeSampleRepo } from '../support/sample-repo.ts';
import { startTestService, type TestService } from '../support/service.ts';
import { registerApiKey, seedLoginTasks, seedViewerTasks } from '../support/tracker.ts';
import { pictures, seriousViolations } from '../support/pictures.ts';
import { VIEWPORT, addRepository, openWindow, type OpenWindow } from '../support/window.ts';
import type { TestRepo } from '../support/repo.ts';

/** Issue 11, findings 4, 6 and 7: what the window shows, driven in Chromium as a user would. */

const SECRET = 'lin_api_ada_personal_key_0042';
const SLOW = { timeout: 30_000 };

let browser: Browser;
let svc: TestService;
let proxy: FaultProxy;
let repo: TestRepo;
let win: OpenWindow;
let page: Page;
const shots = pictures('paused');

beforeAll(async () => {
  buildRenderer();
  browser = await launchChromium();
}, 120_000);
afterAll(async () => {
  await browser?.close();
  shots.cleanup();
});

beforeEach(async () => {
  svc = await startTestService();
  // Between the agent and the service, so that a test can take the service away and give it back.
  proxy = await startFaultProxy(svc.url);
  repo = makeSampleRepo();
  win = await openWindow(browser, { ...svc, url: proxy.url }, repo);
  page = win.page;
}, 60_000);
afterEach(async () => {
  await win.close();
  await proxy.close();
  await svc.close();
  repo.cleanup();
});

/** The row of a flow in a repository's flows table. */
const flowRow = (name: string) => page.getByRole('row').filter({ has: page.getByRole('button', { name }) });
const filesOf = (name: string) => page.getByRole('list', { name: `Files of ${name}` });
const activity = () => page.getByRole('list', { name: 'Recent activity' }).textContent();

describe('the Sync screen shows what is in sync (finding 6)', () => {
  it('lists flows and their files with states, reasons for what is not sent, and recent activity after an edit', async () => {
    await addRepository(page, repo.root, SAMPLE_COUNTS);
    await expect.poll(() => flowRow('billing').textContent(), SLOW).toContain('synced · 2 not sent');

    repo.write('flows/reports/summary.md', '# Summary\n\nRevenue is up.\n');
    await expect.poll(() => flowRow('reports').textContent(), SLOW).toMatch(/reports\s*3\s*synced/);
    await page.getByRole('button', { name: 'reports' }).click();
    await expect.poll(() => filesOf('reports').textContent(), SLOW).toContain('summary.md synced');
    expect(await filesOf('reports').textContent()).toContain('query.md synced');
    await expect.poll(activity, SLOW).toContain('Sent new file flows/reports/summary.md');

    await page.getByRole('button', { name: 'billing' }).click();
    await expect
      .poll(() => filesOf('billing').textContent(), SLOW)
      .toContain('logo.png not sent: binary (not UTF-8 text): add it to .gitignore');
    expect(await filesOf('billing').textContent()).toContain(
      'sample-data.json not sent: over 1 MiB: add it to .gitignore',
    );
    expect(await filesOf('billing').textContent()).not.toContain('.env');

    // A file skipped after the first sync is told in Recent activity, with the reason and the fix.
    repo.write('flows/reports/chart.png', Buffer.from([0x89, 0x50, 0x4e, 0x47, 0, 0xff]));
    await expect
      .poll(activity, SLOW)
      .toContain('Not sent: flows/reports/chart.png: binary (not UTF-8 text): add it to .gitignore');
    expect(await activity()).not.toContain('Not sent: flows/billing/logo.png');
  });

  it('shows a change as pending while the service is away, and the service going and coming back', async () => {
    await addRepository(page, repo.root, SAMPLE_COUNTS);
    proxy.fault = () => ({
      status: 503,
      body: JSON.stringify({ status: 'error', errorMessage: 'The service is restarting' }),
    });
    repo.write('flows/onboarding/flow.yaml', 'name: onboarding\nsteps:\n  - welcome\n');
    // A 503 is an answer: the service is unavailable, not offline (issue 39).
    await expect.poll(activity, SLOW).toContain('Service unavailable: ');
    await expect.poll(() => flowRow('onboarding').textContent(), SLOW).toContain('pending (1)');
    await page.getByRole('button', { name: 'onboarding' }).click();
    await expect.poll(() => filesOf('onboarding').textContent(), SLOW).toContain('flow.yaml pending');

    proxy.fault = () => null;
    await expect.poll(activity, SLOW).toContain('Back online');
    await expect.poll(activity, SLOW).toContain('Sent changes to flows/onboarding/flow.yaml');
    await expect.poll(() => filesOf('onboarding').textContent(), SLOW).toContain('flow.yaml synced');
  });
});

describe('the folder field', () => {
  it('keeps a folder typed while the one before is being added, and empties once the folder added is still in it', async () => {
    const field = page.getByLabel('Repository folder');
    await expect.poll(() => field.isEnabled(), SLOW).toBe(true);
    // The service takes its time (a first sync of a large repository): the add stays "Adding…" until let go.
    let letGo = () => {};
    const held = new Promise<void>((resolve) => (letGo = resolve));
    proxy.hold = () => held;
    await field.fill(repo.root);
    await page.getByRole('button', { name: 'Add folder' }).click();
    await expect.poll(() => page.getByRole('button', { name: 'Adding…' }).count(), SLOW).toBe(1);
    const next = `${repo.dir}/second-app`;
    await field.fill(next);
    expect(await page.getByRole('button', { name: 'Adding…' }).count()).toBe(1);

    proxy.hold = () => undefined;
    letGo();
    await expect.poll(() => page.getByTestId('counts').textContent(), SLOW).toContain(SAMPLE_COUNTS);
    await expect.poll(() => page.getByRole('button', { name: 'Add folder' }).count(), SLOW).toBe(1);
    // What the user typed meanwhile is theirs: the add's end wiped it, and their next Add sent nothing.
    expect(await field.inputValue()).toBe(next);

    // The folder just added, still in the field (nothing typed meanwhile), is let go of as before.
    await field.fill(repo.root);
    await page.getByRole('button', { name: 'Add folder' }).click();
    await expect.poll(() => field.inputValue(), SLOW).toBe('');
  });
});

describe('a paused repository (finding 7; issue 25, paused everywhere)', () => {
  it('still shows its counts and last sync, counts what changes while paused, and says so until resumed', async () => {
    await addRepository(page, repo.root, SAMPLE_COUNTS);
    await page.getByRole('button', { name: 'Pause' }).click();
    await expect.poll(() => page.getByTestId('phase').textContent(), SLOW).toBe('paused');
    expect(await page.getByTestId('counts').textContent()).toContain(SAMPLE_COUNTS);
    expect(await page.getByText(/^Last sync:/).textContent()).not.toContain('never');
    expect(await page.getByRole('button', { name: 'Sync now' }).isDisabled()).toBe(true);
    // And it looks it: it was drawn as any button, opaque, with a pointer (issue 42).
    const looks = (await page.evaluate(`(() => {
      const button = [...document.querySelectorAll('button')].find((b) => b.textContent === 'Sync now');
      return [getComputedStyle(button).opacity, getComputedStyle(button).cursor];
    })()`)) as [string, string];
    expect(Number(looks[0])).toBeLessThan(1);
    expect(looks[1]).toBe('not-allowed');
    await expect.poll(activity, SLOW).toContain('Paused: changes are counted and sent when you resume');

    // An edit while paused is pending, and the card says it waits for the resume (it said "0 pending").
    repo.write('flows/onboarding/flow.yaml', 'name: onboarding\nsteps:\n  - welcome\n');
    await expect
      .poll(() => page.getByTestId('paused').textContent(), SLOW)
      .toMatch(/^Paused since .+: 1 change waiting, sent when you resume\.$/);
    expect(await page.getByTestId('counts').textContent()).toContain('1 pending');
    expect(await page.getByTestId('phase').textContent()).toBe('paused');
    await shots.take(page, 'paused');
    expect(await seriousViolations(page)).toEqual([]);

    await page.getByRole('button', { name: 'Resume' }).click();
    await expect.poll(() => page.getByTestId('phase').textContent(), SLOW).toBe('in sync');
    await expect.poll(activity, SLOW).toContain('Resumed: sending 1 change made while paused');
    await expect.poll(activity, SLOW).toContain('Sent changes to flows/onboarding/flow.yaml');
    expect(await page.getByTestId('counts').textContent()).toContain('0 pending');
    expect(await page.getByTestId('paused').count()).toBe(0);
    // The pushed status can show `idle` before Resume's own answer arrives, and the button waits for that answer.
    await expect.poll(() => page.getByRole('button', { name: 'Sync now' }).isDisabled(), SLOW).toBe(false);
  });
});

describe('no stale messages, a list of permission modes, counts in words (finding 7)', () => {
  it('Repo config: permission mode is a choice; "New file" and "Saved …" do not outlive what they describe', async () => {
    await addRepository(page, repo.root, SAMPLE_COUNTS);
    await page.getByRole('tab', { name: 'Repo config' }).click();
    await expect.poll(() => page.getByText(/^New file: /).count(), SLOW).toBe(1);
    const mode = page.getByRole('combobox', { name: 'Permission mode' });
    expect(await mode.locator('option').allTextContents()).toEqual([
      '(none)',
      'ask',
      'acceptEdits',
      'plan',
      'bypassPermissions',
    ]);
    await page.getByLabel('Model').fill('large');
    await mode.selectOption('plan');
    await page.getByRole('button', { name: 'Save' }).click();
    await expect.poll(() => page.getByRole('status').textContent(), SLOW).toContain('Saved to');
    await expect.poll(() => page.getByText(/^New file: /).count(), SLOW).toBe(0);
    await page.getByLabel('Editor').fill('code');
    await expect.poll(() => page.getByRole('status').count(), SLOW).toBe(0);

    // A job without a name or a command: said in words, not zod's (issue 25 item 6).
    await page.getByRole('button', { name: 'Add a background job' }).click();
    await page.getByRole('button', { name: 'Save' }).click();
    await expect.poll(() => page.locator('#job-0-name-error').textContent(), SLOW).toBe('Cannot be empty');
    expect(await page.locator('#job-0-command-error').textContent()).toBe('Cannot be empty');
    expect(await page.locator('body').textContent()).not.toMatch(/Too small|expected string/);
  });

  it('Tasks: "1 sub-task", and "Updated …" goes when the next change begins', async () => {
    await addRepository(page, repo.root, SAMPLE_COUNTS);
    await seedLoginTasks(svc);
    await registerApiKey(svc, SECRET, 'u-ada');
    await page.getByRole('tab', { name: 'Settings' }).click();
    await page.getByLabel('New personal API key').fill(SECRET);
    await page.getByRole('button', { name: 'Save key' }).click();
    await expect.poll(() => page.getByTestId('api-key').textContent(), SLOW).toContain('lin_…0042');
    await page.getByRole('tab', { name: 'Tasks' }).click();
    await page.getByLabel('Search the tracker').fill('login');
    await page.getByRole('button', { name: 'Search' }).click();
    await page.getByRole('button', { name: 'Open ENG-1', exact: true }).click();
    const detail = page.getByTestId('task-detail');
    await expect.poll(() => detail.textContent(), SLOW).toContain('with 1 sub-task');
    expect(await detail.textContent()).not.toContain('1 sub-tasks');
    await detail.getByLabel('Priority').selectOption('High');
    await detail.getByRole('button', { name: 'Save' }).click();
    await expect.poll(() => detail.getByRole('status').count(), SLOW).toBe(1);
    await detail.getByLabel('Status').selectOption('Done');
    await expect.poll(() => detail.getByRole('status').count(), SLOW).toBe(0);
  });
});

describe('Tasks (finding 4)', () => {
  it('opens on my open tasks; a task opened from a full page is focused, in view, described, and shows its new status after a save', async () => {
    await addRepository(page, repo.root, SAMPLE_COUNTS);
    await seedViewerTasks(svc, SECRET, 30);
    await page.getByRole('tab', { name: 'Settings' }).click();
    await page.getByLabel('New personal API key').fill(SECRET);
    await page.getByRole('button', { name: 'Save key' }).click();
    await expect.poll(() => page.getByTestId('api-key').textContent(), SLOW).toContain('lin_…0042');

    // No search: the screen opens on Ada's open tasks, a full page of them, and none of anyone else's.
    await page.getByRole('tab', { name: 'Tasks' }).click();
    await expect
      .poll(() => page.getByRole('heading', { level: 3 }).first().textContent(), SLOW)
      .toBe('Open tasks assigned to Ada Lovelace');
    await expect.poll(() => page.getByRole('button', { name: /^Open ENG-/ }).count(), SLOW).toBe(30);
    expect(await page.getByRole('button', { name: 'Open ENG-90' }).count()).toBe(0);
    expect(await page.getByRole('button', { name: 'Open ENG-91' }).count()).toBe(0);

    // The last row of the page, far below the fold.
    const open = page.getByRole('button', { name: 'Open ENG-101', exact: true });
    await open.scrollIntoViewIfNeeded();
    await open.click();
    const detail = page.getByTestId('task-detail');
    await expect
      .poll(() => page.evaluate(`document.activeElement?.closest('[data-testid="task-detail"]') !== null`))
      .toBe(true);
    await expect.poll(() => detail.textContent(), SLOW).toContain('ENG-101 · In Progress');
    const box = await page.getByRole('heading', { name: /^ENG-101/ }).boundingBox();
    expect(box).not.toBeNull();
    expect(box!.y).toBeGreaterThanOrEqual(0);
    expect(box!.y + box!.height).toBeLessThanOrEqual(VIEWPORT.height);
    expect(await detail.getByLabel('Description').textContent()).toContain(
      'Steps: open the flow, run it twice, compare the logs. Task 101.',
    );

    await detail.getByLabel('Status').selectOption('Done');
    await detail.getByRole('button', { name: 'Save' }).click();
    await expect.poll(() => detail.getByRole('status').textContent(), SLOW).toContain('Updated ENG-101');
    await expect
      .poll(() => page.getByRole('heading', { name: /^ENG-101/ }).textContent(), SLOW)
      .toBe('ENG-101 · Done');
  });
});
