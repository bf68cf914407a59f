import { renameSync } from 'node:fs';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createClient } from '../../src/client/index.ts';
import { buildRenderer, launchChromium } from '../support/browser.ts';
import { sha256 } from '../support/flows.ts';
import { seriousViolations } from '../support/pictures.ts';
import { makeRepo, serviceTree, type TestRepo } from '../support/repo.ts';
import { startTestService, type TestService } from '../support/service.ts';
import { addRepository, initGit, openWindow, type OpenWindow } from '../support/window.ts';

/**
 * Desktop notifications in a browser (issue 25): asked for on a click in Settings, then one notification for each
 * entry into a state that waits for the user, none for a sync. The browser grants the permission as a user's
 * "Allow" would (playwright's context permission); the page's Notification is the browser's, wrapped by the test
 * to count what the window shows (each call still reaches the real one).
 */
const SLOW = { timeout: 30_000 };

/** Runs before the window's own scripts: every Notification constructed is kept in `window.shown`. */
const RECORD_NOTIFICATIONS = `(() => {
  const Real = window.Notification;
  window.shown = [];
  window.Notification = class extends Real {
    constructor(title, options) {
      super(title, options);
      window.shown.push({ title, body: options?.body ?? null, tag: options?.tag ?? null, notification: this });
    }
  };
})()`;

interface Shown {
  title: string;
  body: string | null;
  tag: string | null;
}

let browser: Browser;
let svc: TestService;
let repo: TestRepo;
let win: OpenWindow;
let page: Page;

const shown = () =>
  page.evaluate('window.shown.map(({ title, body, tag }) => ({ title, body, tag }))') as Promise<Shown[]>;
const counts = () => page.getByTestId('counts').textContent();
let removals = 0;
const removeGenerated = () =>
  renameSync(join(repo.root, 'flows/generated'), join(repo.dir, `generated-${++removals}`));

beforeAll(async () => {
  buildRenderer();
  browser = await launchChromium();
  svc = await startTestService();
  const files: Record<string, string> = { 'flows/ci/build.yml': 'steps:\n  - run: npm test\n' };
  for (let i = 0; i < 40; i++) files[`flows/generated/step-${i}.yml`] = `step: ${i}\n`;
  repo = makeRepo(files);
  initGit(repo);
  win = await openWindow(browser, svc, repo, {
    options: { permissions: ['notifications'] },
    initScript: RECORD_NOTIFICATIONS,
  });
  page = win.page;
  await addRepository(page, repo.root, '41 files · 0 pending');
}, 120_000);
afterAll(async () => {
  await win?.close();
  await svc?.close();
  repo?.cleanup();
  await browser?.close();
});

describe('desktop notifications in a browser', () => {
  it('are off until the user clicks Notify me in Settings, which asks the browser and is remembered', async () => {
    await page.getByRole('tab', { name: 'Settings' }).click();
    const notify = page.getByRole('region', { name: 'Desktop notifications' });
    await expect.poll(() => notify.getByTestId('notify-state').textContent(), SLOW).toMatch(/^Off\./);
    expect(await seriousViolations(page)).toEqual([]);

    await notify.getByRole('button', { name: 'Notify me' }).click();
    await expect.poll(() => notify.getByTestId('notify-state').textContent(), SLOW).toMatch(/^On: /);
    expect(await notify.getByRole('button', { name: 'Stop notifying' }).count()).toBe(1);
    expect(await seriousViolations(page)).toEqual([]);
    // Remembered by this address: a reload keeps it on.
    await page.reload();
    await page.getByRole('tab', { name: 'Settings' }).click();
    await expect.poll(() => notify.getByTestId('notify-state').textContent(), SLOW).toMatch(/^On: /);
    await page.getByRole('tab', { name: 'Sync' }).click();
    await expect.poll(counts, SLOW).toContain('41 files · 0 pending');
  });

  it('show one notification when deletions are held, none for the syncs before, during and after', async () => {
    // An ordinary sync: sent, nothing shown.
    repo.write('flows/ci/build.yml', 'steps:\n  - run: npm ci\n');
    await expect
      .poll(() => serviceTree(svc.read, 'acme', 'app')['flows/ci/build.yml'], SLOW)
      .toBe('steps:\n  - run: npm ci\n');
    await expect.poll(counts, SLOW).toContain('0 pending');
    expect(await shown()).toEqual([]);

    // A folder of 40 files moved out at once (one rename: `rm -r` removes file by file, and a watcher that sees
    // the first 3 alone sends them, as any edit): held, and said once.
    removeGenerated();
    await expect.poll(counts, SLOW).toContain('40 deletions held');
    await expect.poll(shown, SLOW).toHaveLength(1);
    expect(await shown()).toEqual([
      {
        title: 'acme/app: 40 deletions held',
        body: 'More deleted at once than this repository deletes without asking: open Waiting for you to delete them on the service or restore them.',
        tag: `held-deletions ${repo.root}`,
      },
    ]);

    // Syncs while they stay held: sent, nothing more shown.
    for (const run of ['npm ci --ignore-scripts', 'npm test']) {
      repo.write('flows/ci/build.yml', `steps:\n  - run: ${run}\n`);
      await expect
        .poll(() => serviceTree(svc.read, 'acme', 'app')['flows/ci/build.yml'], SLOW)
        .toBe(`steps:\n  - run: ${run}\n`);
    }
    await page.getByRole('button', { name: 'Sync now' }).click();
    await expect.poll(counts, SLOW).toContain('40 deletions held');
    expect(await shown()).toHaveLength(1);
  });

  it("a click on it brings the window to the repository's Waiting for you", async () => {
    await page.getByRole('tab', { name: 'Settings' }).click();
    await page.evaluate("window.shown[0].notification.dispatchEvent(new Event('click'))");
    const waiting = page.getByRole('region', { name: 'Waiting for you in acme/app' });
    await expect.poll(() => page.locator('#tab-sync').getAttribute('aria-selected'), SLOW).toBe('true');
    await expect
      .poll(() => page.evaluate("document.activeElement?.getAttribute('aria-label')"), SLOW)
      .toBe('Waiting for you in acme/app');

    // Settled: the state ends, which is no news either.
    page.once('dialog', (dialog) => void dialog.accept());
    await waiting.getByRole('button', { name: 'Restore them on disk' }).click();
    await expect.poll(counts, SLOW).toContain('41 files · 0 pending');
    expect(await shown()).toHaveLength(1);
  });

  it('show one for a conflict with a teammate, none for the syncs while it waits', async () => {
    const before = serviceTree(svc.read, 'acme', 'app')['flows/ci/build.yml']!;
    // Bob changes build.yml on the service, on the version he had; Ada, who has not seen it, edits it here.
    const bob = createClient({ baseUrl: svc.url, auth: { userToken: svc.tokens.user } });
    const his = 'steps:\n  - run: npm ci\n  - run: npm test\n';
    await bob.flowDef.syncBatch(
      {
        repo_owner: 'acme',
        repo_name: 'app',
        flows: [
          {
            flow_path: 'flows/ci',
            files: [{ path: 'build.yml', content: his, hash: sha256(his), base_hash: sha256(before) }],
          },
        ],
      },
      { writer: 'bob@desk:~/code/app' },
    );
    await bob.close();
    repo.write('flows/ci/build.yml', 'steps:\n  - run: npm test -- --coverage\n');
    await expect.poll(counts, SLOW).toContain('1 in conflict');
    await expect.poll(shown, SLOW).toHaveLength(2);
    expect((await shown())[1]).toEqual({
      title: 'acme/app: 1 file in conflict',
      body: "Changed on the service since this checkout synced: open Waiting for you to keep yours or take the service's.",
      tag: `conflict ${repo.root}`,
    });

    // Another flow synced while the conflict waits: nothing more.
    repo.write('flows/lint/lint.yml', 'lint: true\n');
    await expect
      .poll(() => serviceTree(svc.read, 'acme', 'app')['flows/lint/lint.yml'], SLOW)
      .toBe('lint: true\n');
    await expect.poll(counts, SLOW).toContain('1 in conflict');
    expect(await shown()).toHaveLength(2);
  });

  it("show one when the repository's folder is gone, whose click leads to its card; back, nothing more", async () => {
    // Moved away (a drive unmounted, a folder renamed) while the agent runs, and put back.
    const away = `${repo.root}.away`;
    renameSync(repo.root, away);
    await expect.poll(() => page.getByTestId('phase').textContent(), SLOW).toBe('missing');
    await expect.poll(shown, SLOW).toHaveLength(3);
    expect((await shown())[2]).toEqual({
      title: 'acme/app: its folder is gone',
      body: `${repo.root} is gone; syncing resumes when it is back`,
      tag: `folder-gone ${repo.root}`,
    });
    await page.getByRole('tab', { name: 'Settings' }).click();
    await page.evaluate("window.shown[2].notification.dispatchEvent(new Event('click'))");
    await expect
      .poll(() => page.evaluate("document.activeElement?.getAttribute('aria-label')"), SLOW)
      .toBe('acme/app');

    renameSync(away, repo.root);
    await expect.poll(() => page.getByTestId('phase').textContent(), SLOW).not.toBe('missing');
    // The conflict of the test before waited all along: not said again.
    await expect.poll(counts, SLOW).toContain('1 in conflict');
    expect(await shown()).toHaveLength(3);
  });

  it('say nothing again when the repository syncs, or is paused and resumed, while deletions are held and a conflict waits', async () => {
    removeGenerated();
    await expect.poll(counts, SLOW).toContain('40 deletions held');
    await expect.poll(shown, SLOW).toHaveLength(4);
    expect((await shown())[3]!.title).toBe('acme/app: 40 deletions held');

    // Synced again, by hand and by an edit: what waits is what waited.
    await page.getByRole('button', { name: 'Sync now' }).click();
    await expect.poll(counts, SLOW).toContain('40 deletions held');
    expect(await counts()).toContain('1 in conflict');
    repo.write('flows/lint/lint.yml', 'lint: false\n');
    await expect
      .poll(() => serviceTree(svc.read, 'acme', 'app')['flows/lint/lint.yml'], SLOW)
      .toBe('lint: false\n');
    await expect.poll(counts, SLOW).toContain('40 deletions held');
    expect(await shown()).toHaveLength(4);

    // Paused (still held: a paused repository keeps what waits for its user) and resumed: not news.
    await page.getByRole('button', { name: 'Pause' }).click();
    await expect.poll(() => page.getByTestId('paused').isVisible(), SLOW).toBe(true);
    // The badge says the state every place says (the tray, `status`): what waits for its user comes before paused.
    expect(await page.getByTestId('phase').textContent()).toBe('waiting for you');
    expect(await counts()).toContain('40 deletions held');
    expect(await shown()).toHaveLength(4);
    await page.getByRole('button', { name: 'Resume' }).click();
    await expect.poll(counts, SLOW).toContain('40 deletions held');
    expect(await shown()).toHaveLength(4);
  });
});
