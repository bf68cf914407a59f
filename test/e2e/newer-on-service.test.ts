import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createClient } from '../../src/client/index.ts';
import { buildRenderer, launchChromium } from '../support/browser.ts';
import { sha256 } from '../support/flows.ts';
import { pictures, seriousViolations } from '../support/pictures.ts';
import { makeRepo, serviceTree, type TestRepo } from '../support/repo.ts';
import { startTestService, type TestService } from '../support/service.ts';
import { addRepository, initGit, openWindow, type OpenWindow } from '../support/window.ts';

/**
 * Issue 41 in the window: a teammate's edit of a file untouched here shows by itself (the agent's check of the
 * service, every minute; a second here) as newer on the service, by whom: never a conflict, never "synced", and
 * taken with one click that changes nothing else here.
 */
const IMAGES = pictures('newer');
const SLOW = { timeout: 30_000 };
const BEFORE = 'steps:\n  - run: npm test\n';
const HIS = 'steps:\n  - run: npm ci\n  - run: npm test\n';

let browser: Browser;
let svc: TestService;
let repo: TestRepo;
let win: OpenWindow;
let page: Page;

beforeAll(async () => {
  buildRenderer();
  browser = await launchChromium();
  svc = await startTestService();
  repo = makeRepo({ 'flows/ci/build.yml': BEFORE, 'flows/ci/deploy.yml': 'steps:\n  - run: ./deploy.sh\n' });
  initGit(repo);
  win = await openWindow(browser, svc, repo, { env: { FLOWSYNC_SERVICE_CHECK_MS: '1000' } });
  page = win.page;
  await addRepository(page, repo.root, '2 files · 0 pending');
}, 120_000);
afterAll(async () => {
  IMAGES.cleanup();
  await win?.close();
  await svc?.close();
  repo?.cleanup();
  await browser?.close();
});

describe('newer on the service, in the window', () => {
  it("a teammate's edit is newer on the service by itself, never a conflict nor synced, and Take them takes it", async () => {
    const bob = createClient({ baseUrl: svc.url, auth: { userToken: svc.tokens.user } });
    await bob.flowDef.syncBatch(
      {
        repo_owner: 'acme',
        repo_name: 'app',
        flows: [
          {
            flow_path: 'flows/ci',
            files: [{ path: 'build.yml', content: HIS, hash: sha256(HIS), base_hash: sha256(BEFORE) }],
          },
        ],
      },
      { writer: 'bob@desk:~/code/app' },
    );
    await bob.close();

    // No Sync now: the agent's own check finds it.
    const newer = page.getByRole('region', { name: 'Newer on the service in acme/app' });
    await expect
      .poll(() => newer.textContent(), SLOW)
      .toContain('1 file newer on the service, by bob@desk:~/code/app');
    expect(await newer.textContent()).toContain('flows/ci/build.yml');
    const counts = await page.getByTestId('counts').textContent();
    expect(counts).toContain('1 newer on the service');
    expect(counts).not.toContain('in conflict');
    // The badge says it too, in the tray's words: not "idle", "behind" nor "in sync" (inSyncOf decides it).
    await expect.poll(() => page.getByTestId('phase').textContent(), SLOW).toBe('newer on the service');
    expect(await page.getByRole('region', { name: 'Waiting for you in acme/app' }).count()).toBe(0);
    await page.getByRole('button', { name: /(^|\s)ci$/ }).click();
    const files = page.getByRole('list', { name: 'Files of ci' });
    await expect.poll(() => files.textContent(), SLOW).toContain('build.yml newer on the service');
    // Disk and service differ: nothing on the screen says synced of that flow or file.
    expect(await files.textContent()).not.toMatch(/build\.yml synced/);
    await IMAGES.take(page, 'newer-on-service');
    expect(await seriousViolations(page)).toEqual([]);

    await newer.getByRole('button', { name: 'Take them' }).click();
    await expect.poll(() => newer.count(), SLOW).toBe(0);
    expect(readFileSync(join(repo.root, 'flows/ci/build.yml'), 'utf8')).toBe(HIS);
    expect(readFileSync(join(repo.root, 'flows/ci/deploy.yml'), 'utf8')).toBe(
      'steps:\n  - run: ./deploy.sh\n',
    );
    await expect.poll(() => page.getByTestId('counts').textContent(), SLOW).toContain('2 files · 0 pending');
    await expect.poll(() => page.getByTestId('phase').textContent(), SLOW).toBe('in sync');
    expect(serviceTree(svc.read, 'acme', 'app')['flows/ci/build.yml']).toBe(HIS);
  });
});
