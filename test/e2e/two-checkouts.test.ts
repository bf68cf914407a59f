import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildRenderer, launchChromium } from '../support/browser.ts';
import { gitIn } from '../support/git.ts';
import { allViolations, seriousViolations } from '../support/pictures.ts';
import { makeRepo, type TestRepo } from '../support/repo.ts';
import { startTestService, type TestService } from '../support/service.ts';
import { addRepository, openWindow, type OpenWindow } from '../support/window.ts';

/**
 * Issue 42 point 4: a worktree of acme/app in the window. Add folder gave a red line with a CLI command, where the
 * README names a "Sync from this checkout instead" button; switched back, the worktree's card showed a 404 in its
 * Waiting for you with its old conflicts and a Resume button; two cards named "acme/app" were one name for two
 * regions (axe landmark-unique) and Remove asked to stop syncing "acme/app" without saying which.
 */
const SLOW = { timeout: 30_000 };
let browser: Browser;
let svc: TestService;
let repo: TestRepo;
let worktree: string;
let win: OpenWindow;
let page: Page;

beforeAll(async () => {
  buildRenderer();
  browser = await launchChromium();
  svc = await startTestService();
  repo = makeRepo({ 'flows/ci/build.yml': 'build: 1\n', 'flows/ci/lint.yml': 'lint: 1\n' });
  const git = gitIn(repo.root);
  git('init', '-q', '-b', 'main');
  git('remote', 'add', 'origin', 'git@github.com:acme/app.git');
  git('config', 'user.email', 'ada@example.com');
  git('add', '-A');
  git('commit', '-q', '-m', 'main');
  worktree = join(repo.dir, 'app-feat');
  git('worktree', 'add', '-q', '-b', 'feat', worktree);
  win = await openWindow(browser, svc, repo);
  page = win.page;
  await addRepository(page, repo.root, '2 files · 0 pending');
}, 120_000);
afterAll(async () => {
  await win?.close();
  await svc?.close();
  repo?.cleanup();
  await browser?.close();
});

/** A card by the name it is given when two cards are acme/app: with its folder. */
const card = (root: string) => page.locator(`li.repository[aria-label="acme/app (${root})"]`);

describe('a worktree of a repository synced from another checkout', () => {
  it('is added as a card that offers to sync from it instead, each card named with its folder', async () => {
    await page.getByLabel('Repository folder').fill(worktree);
    await page.getByRole('button', { name: 'Add folder' }).click();
    const feat = card(worktree);
    await expect
      .poll(() => feat.getByRole('button', { name: 'Sync from this checkout instead' }).count(), SLOW)
      .toBe(1);
    expect(await page.getByRole('alert').count()).toBe(0);
    expect(await feat.getByTestId('phase').textContent()).toBe('not synced');
    expect(await feat.textContent()).toContain('(this folder is a worktree of it)');
    // Nothing to resume or sync there: it is not paused, another checkout is its source.
    expect(await feat.getByRole('button', { name: /^(Resume|Pause|Sync now)/ }).count()).toBe(0);

    const main = card(repo.root);
    expect(await main.count()).toBe(1);
    // Its buttons name it: two cards' "Sync now" and "Pause" were the same two names.
    for (const button of [`Sync now: acme/app (${repo.root})`, `Pause acme/app (${repo.root})`])
      expect(await main.getByRole('button', { name: button, exact: true }).count()).toBe(1);
    expect((await allViolations(page)).map((v) => v.id)).toEqual([]);
    // Remove says which of the two.
    let asked = '';
    page.once('dialog', (dialog) => {
      asked = dialog.message();
      void dialog.dismiss();
    });
    await feat.getByRole('button', { name: `Remove acme/app (${worktree})`, exact: true }).click();
    await expect
      .poll(() => asked)
      .toBe(`Stop syncing acme/app (${worktree})? The service keeps what it has.`);
  });

  it('switched to and back, keeps nothing of its turn as the source waiting: no conflicts, no Resume', async () => {
    // The worktree's own version of a file: a conflict while it is the source (the service has main's).
    writeFileSync(join(worktree, 'flows/ci/build.yml'), 'build: feat\n');
    const feat = card(worktree);
    await feat.getByRole('button', { name: 'Sync from this checkout instead' }).click();
    await expect.poll(() => feat.getByTestId('phase').textContent(), SLOW).not.toBe('not synced');
    const waiting = page.getByRole('region', { name: `Waiting for you in acme/app (${worktree})` });
    await expect.poll(() => waiting.textContent(), SLOW).toContain('flows/ci/build.yml');
    // Never synced from the worktree: its version is another one, not "changed" by its user.
    expect(await waiting.getByRole('row', { name: /build\.yml/ }).textContent()).toContain(
      'another version (never synced from here)',
    );
    expect(await seriousViolations(page)).toEqual([]);

    const main = card(repo.root);
    await main.getByRole('button', { name: 'Sync from this checkout instead' }).click();
    await expect.poll(() => feat.getByTestId('phase').textContent(), SLOW).toBe('not synced');
    await expect.poll(() => waiting.count(), SLOW).toBe(0);
    expect(await feat.textContent()).not.toMatch(/not a repository flowsync syncs|404/);
    expect(await feat.getByRole('button', { name: /^(Resume|Pause|Sync now)/ }).count()).toBe(0);
    expect(await feat.getByTestId('counts').textContent()).not.toContain('in conflict');
    await expect
      .poll(() => page.getByRole('button', { name: 'Sync from this checkout instead' }).count())
      .toBe(1);
    expect((await allViolations(page)).map((v) => v.id)).toEqual([]);
  });
});
