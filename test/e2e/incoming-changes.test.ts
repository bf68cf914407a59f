import { existsSync, readFileSync, writeFileSync } from 'node:fs';
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
 * Issue 46 in the window: "Take them" deleted 217 files of a checkout with one click, said nowhere; and a file
 * edited while a teammate's version waited was shown as "Here: unchanged (behind)". Now a take that deletes or
 * overwrites more than the repository deletes without asking opens a dialog that lists them, takes nothing on
 * Cancel, and says what it did in Recent activity; and the "Here" column reads the disk.
 */
const IMAGES = pictures('incoming');
const SLOW = { timeout: 30_000 };
const OLD = Object.fromEntries(
  Array.from({ length: 12 }, (_, i) => [`flows/old/f${String(i).padStart(2, '0')}.yml`, `old: ${i}\n`]),
);
const FILES = { 'flows/ci/build.yml': 'build: 1\n', 'flows/ci/test.yml': 'test: 1\n', ...OLD };

let browser: Browser;
let svc: TestService;
let repo: TestRepo;
let win: OpenWindow;
let page: Page;

beforeAll(async () => {
  buildRenderer();
  browser = await launchChromium();
  svc = await startTestService();
  repo = makeRepo(FILES);
  initGit(repo);
  win = await openWindow(browser, svc, repo, { env: { FLOWSYNC_SERVICE_CHECK_MS: '1000' } });
  page = win.page;
  await addRepository(page, repo.root, '14 files · 0 pending');
}, 120_000);
afterAll(async () => {
  IMAGES.cleanup();
  await win?.close();
  await svc?.close();
  repo?.cleanup();
  await browser?.close();
});

/** Bob, another checkout: his edits and deletions go to the service on the versions this checkout synced. */
async function bob(flows: { flow_path: string; files?: object[]; deletes?: object[] }[]) {
  const client = createClient({ baseUrl: svc.url, auth: { userToken: svc.tokens.user } });
  await client.flowDef.syncBatch(
    { repo_owner: 'acme', repo_name: 'app', flows: flows as never },
    { writer: 'bob@desk:~/code/app' },
  );
  await client.close();
}

const edit = (path: string, before: string, after: string) => ({
  path,
  content: after,
  hash: sha256(after),
  base_hash: sha256(before),
});

describe("the team's changes coming in, in the window", () => {
  it('Take them lists 12 deletions and an edit in a dialog first; Cancel takes none; confirmed, it says what it did', async () => {
    await bob([
      { flow_path: 'flows/ci', files: [edit('build.yml', 'build: 1\n', 'build: bob\n')] },
      {
        flow_path: 'flows/old',
        files: [],
        deletes: Object.entries(OLD).map(([path, content]) => ({
          path: path.slice('flows/old/'.length),
          base_hash: sha256(content),
        })),
      },
    ]);
    const newer = page.getByRole('region', { name: 'Newer on the service in acme/app' });
    await expect.poll(() => newer.textContent(), SLOW).toContain('13 files newer on the service');

    await newer.getByRole('button', { name: 'Take them' }).click();
    const dialog = page.getByRole('dialog', { name: /Take these 13 files from the service\?/ });
    await expect.poll(() => dialog.count(), SLOW).toBe(1);
    expect(await dialog.textContent()).toContain('12 deleted here, 1 replaced');
    const listed = dialog.getByRole('list', { name: 'Files to take from the service' }).getByRole('listitem');
    expect(await listed.count()).toBe(13);
    expect(await dialog.textContent()).toContain('flows/old/f00.yml deleted here (deleted on the service)');
    expect(await dialog.textContent()).toContain(
      'flows/ci/build.yml replaced (changed on the service) by bob',
    );
    // Asked, nothing taken yet.
    expect(existsSync(join(repo.root, 'flows/old/f00.yml'))).toBe(true);
    await IMAGES.take(page, 'take-asks');
    expect(await seriousViolations(page)).toEqual([]);

    await dialog.getByRole('button', { name: 'Cancel' }).click();
    expect(await dialog.count()).toBe(0);
    expect(existsSync(join(repo.root, 'flows/old/f00.yml'))).toBe(true);
    expect(readFileSync(join(repo.root, 'flows/ci/build.yml'), 'utf8')).toBe('build: 1\n');

    await newer.getByRole('button', { name: 'Take them' }).click();
    await dialog.getByRole('button', { name: 'Take these 13' }).click();
    await expect.poll(() => newer.count(), SLOW).toBe(0);
    expect(existsSync(join(repo.root, 'flows/old/f00.yml'))).toBe(false);
    expect(readFileSync(join(repo.root, 'flows/ci/build.yml'), 'utf8')).toBe('build: bob\n');
    expect(readFileSync(join(repo.root, 'flows/ci/test.yml'), 'utf8')).toBe('test: 1\n');
    await expect
      .poll(() => page.getByRole('list', { name: 'Recent activity' }).textContent(), SLOW)
      .toContain('Taken: 13 files taken from the service: 12 deleted here, 1 replaced');
    expect(serviceTree(svc.read, 'acme', 'app')).toEqual({
      'flows/ci/build.yml': 'build: bob\n',
      'flows/ci/test.yml': 'test: 1\n',
    });
  });

  it('a file edited while a teammate’s version waits is a conflict whose "Here" is changed, and said in Recent activity', async () => {
    await bob([{ flow_path: 'flows/ci', files: [edit('test.yml', 'test: 1\n', 'test: bob\n')] }]);
    const newer = page.getByRole('region', { name: 'Newer on the service in acme/app' });
    await expect.poll(() => newer.textContent(), SLOW).toContain('1 file newer on the service');
    writeFileSync(join(repo.root, 'flows/ci/test.yml'), 'test: 1\nmore: ada\n');
    const waiting = page.getByRole('region', { name: 'Waiting for you in acme/app' });
    const row = waiting.getByRole('row', { name: /flows\/ci\/test\.yml/ });
    // Its cells: on the service, here, the actions.
    await expect.poll(() => row.getByRole('cell').nth(1).textContent(), SLOW).toBe('changed');
    await expect
      .poll(() => page.getByRole('list', { name: 'Recent activity' }).textContent(), SLOW)
      .toContain('Conflict: flows/ci/test.yml changed here and on the service (by bob@desk:~/code/app)');
    expect(await newer.count()).toBe(0);
    expect(readFileSync(join(repo.root, 'flows/ci/test.yml'), 'utf8')).toBe('test: 1\nmore: ada\n');
  });
});
