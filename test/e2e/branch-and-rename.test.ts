import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildRenderer, launchChromium } from '../support/browser.ts';
import { seriousViolations } from '../support/pictures.ts';
import { gitIn } from '../support/git.ts';
import { makeRepo, serviceTree, type TestRepo } from '../support/repo.ts';
import { startTestService, type TestService } from '../support/service.ts';
import { addRepository, openWindow, type OpenWindow } from '../support/window.ts';

/**
 * Issue 24 in the window: a repository's card names the branch of its checkout, and a remote renamed with `git
 * remote set-url` is shown on the card (synced under the old name meanwhile) with one button that moves it.
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
  repo = makeRepo({ 'flows/ci/build.yml': 'build: 1\n', 'flows/ci/lint.yml': 'lint: 1\n' });
  const git = gitIn(repo.root);
  git('init', '-q', '-b', 'feat-x');
  git('remote', 'add', 'origin', 'git@github.com:acme/app.git');
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

describe("a repository's card says where", () => {
  it('names the branch, shows a renamed origin, and syncs under the new name with one click', async () => {
    const card = page.getByRole('listitem', { name: 'acme/app' });
    expect(await card.getByTestId('branch').textContent()).toBe('feat-x');

    gitIn(repo.root)('remote', 'set-url', 'origin', 'git@github.com:acme/app2.git');
    // Looked at again when the repository is resumed or started again (and at each periodic rescan).
    await card.getByRole('button', { name: 'Pause' }).click();
    await card.getByRole('button', { name: 'Resume' }).click();
    await expect
      .poll(() => card.getByTestId('rename').textContent(), SLOW)
      .toContain('acme/app is now acme/app2 on origin');
    expect(serviceTree(svc.read, 'acme', 'app2')).toEqual({});
    expect(await seriousViolations(page)).toEqual([]);

    await card.getByRole('button', { name: 'Sync as acme/app2' }).click();
    const moved = page.getByRole('listitem', { name: 'acme/app2' });
    await expect.poll(() => moved.getByTestId('counts').textContent(), SLOW).toContain('2 files · 0 pending');
    expect(await moved.getByTestId('rename').count()).toBe(0);
    expect(serviceTree(svc.read, 'acme', 'app2')).toEqual({
      'flows/ci/build.yml': 'build: 1\n',
      'flows/ci/lint.yml': 'lint: 1\n',
    });
    expect(Object.keys(serviceTree(svc.read, 'acme', 'app'))).toHaveLength(2);
  });
});
