import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll, expect, it } from 'vitest';
import { buildRenderer, launchChromium } from '../support/browser.ts';
import { makeRepo, type TestRepo } from '../support/repo.ts';
import { startServeProcess, type ServeProcess } from '../support/serve-process.ts';
import { readDatabase } from '../support/service.ts';
import { addRepository, initGit, openWindow, type OpenWindow } from '../support/window.ts';

/**
 * Issue 46, "the Repo config screen saves on the base it loaded": Ada opens the Repo config screen and edits a
 * field; meanwhile she edits `.flowsync/repo-config.json` by hand (her agent sends that edit to the service). Her
 * Save in the screen used to write over the hand edit, send it over the service's copy, and say "Saved to … and the
 * service.", keeping no copy. Now it is a conflict shown in the screen with both choices, and each choice keeps a
 * copy of what it replaces beside the file.
 */
const SLOW = { timeout: 30_000 };
const CONFIG = '.flowsync/repo-config.json';

let browser: Browser;
let serve: ServeProcess | null = null;
let win: OpenWindow | null = null;
let repo: TestRepo | null = null;

beforeAll(async () => {
  buildRenderer();
  browser = await launchChromium();
}, 120_000);
afterAll(async () => {
  await browser?.close();
});
afterEach(async () => {
  await win?.close();
  win = null;
  await serve?.stop();
  serve = null;
  repo?.cleanup();
  repo = null;
});

it('a hand edit made while the screen is open survives its Save: a conflict with both choices, a copy kept of what each replaces', async () => {
  const a = makeRepo({
    'flows/ci/build.yml': 'build: 1\n',
    [CONFIG]: `${JSON.stringify({ editor: 'vim' }, null, 2)}\n`,
  });
  repo = a;
  initGit(a);
  serve = await startServeProcess(join(a.dir, 'service.db'), join(a.dir, 'service.log'));
  const rows = readDatabase(join(a.dir, 'service.db'));
  const onService = () => {
    const found = rows<{ config: string }>(
      "SELECT config FROM repo_configs WHERE owner = 'acme' AND name = 'app'",
    );
    return found.length === 0 ? null : (JSON.parse(found[0]!.config) as unknown);
  };
  const onDisk = () => readFileSync(join(a.root, CONFIG), 'utf8');

  win = await openWindow(browser, serve, a);
  const page: Page = win.page;
  await addRepository(page, a.root, '1 flow');
  await expect.poll(onService, SLOW).toEqual({ editor: 'vim' });

  // The screen open on the file as it is; Ada types in it.
  await page.getByRole('tab', { name: 'Repo config' }).click();
  await expect.poll(() => page.getByLabel('Editor').inputValue(), SLOW).toBe('vim');
  await page.getByLabel('Editor').fill('code');

  // Meanwhile, by hand in her editor; her agent sends it to the service as any hand edit.
  const handEdit = `{\n  "editor": "vim",\n  "user": "ada"\n}\n`;
  a.write(CONFIG, handEdit);
  await expect.poll(onService, SLOW).toEqual({ editor: 'vim', user: 'ada' });

  // Save in the screen: a conflict with the file, shown with both choices; nothing written, nothing sent.
  await page.getByRole('button', { name: 'Save' }).click();
  const changed = page.getByTestId('repo-config-file-changed');
  await expect.poll(() => changed.count(), SLOW).toBe(1);
  expect(await changed.textContent()).toContain(`${CONFIG} changed on disk since this screen loaded it`);
  expect(await changed.textContent()).toContain('"user":"ada"');
  expect(await page.getByRole('button', { name: 'Take mine' }).count()).toBe(1);
  expect(await page.getByRole('button', { name: "Take the file's" }).count()).toBe(1);
  expect(onDisk()).toBe(handEdit);
  expect(onService()).toEqual({ editor: 'vim', user: 'ada' });
  expect(await page.getByText(/Saved to .* and the service\./).count()).toBe(0);

  // Take the file's: the form shows the file; what she had typed is kept beside it, and the screen says where.
  await page.getByRole('button', { name: "Take the file's" }).click();
  await expect.poll(() => changed.count(), SLOW).toBe(0);
  await expect.poll(() => page.getByLabel('User').inputValue(), SLOW).toBe('ada');
  expect(await page.getByLabel('Editor').inputValue()).toBe('vim');
  const keptLine = page.getByTestId('repo-config-kept');
  const screenKept = /yours was kept in (\S+)\.$/.exec((await keptLine.textContent()) ?? '')?.[1];
  expect(screenKept).toMatch(/^\.flowsync\/repo-config\.json\.conflict-/);
  expect(JSON.parse(readFileSync(join(a.root, screenKept!), 'utf8'))).toEqual({ editor: 'code' });
  expect(onDisk()).toBe(handEdit);
  expect(onService()).toEqual({ editor: 'vim', user: 'ada' });

  // Again: she types, edits by hand, saves; this time she takes hers. The hand edit is kept beside the file first.
  await page.getByLabel('Editor').fill('helix');
  const secondEdit = `{ "editor": "nano", "user": "ada" }\n`;
  a.write(CONFIG, secondEdit);
  await expect.poll(onService, SLOW).toEqual({ editor: 'nano', user: 'ada' });
  await page.getByRole('button', { name: 'Save' }).click();
  await expect.poll(() => changed.count(), SLOW).toBe(1);
  expect(onDisk()).toBe(secondEdit);
  await page.getByRole('button', { name: 'Take mine' }).click();
  await expect.poll(() => changed.count(), SLOW).toBe(0);
  await expect.poll(() => JSON.parse(onDisk()) as unknown, SLOW).toEqual({ editor: 'helix', user: 'ada' });
  await expect.poll(onService, SLOW).toEqual({ editor: 'helix', user: 'ada' });
  const fileKept = /the file's was kept in (\S+)\.$/.exec((await keptLine.textContent()) ?? '')?.[1];
  expect(fileKept).toMatch(/^\.flowsync\/repo-config\.json\.conflict-/);
  expect(readFileSync(join(a.root, fileKept!), 'utf8')).toBe(secondEdit);
  await expect.poll(() => page.getByLabel('Editor').inputValue(), SLOW).toBe('helix');

  // And a Save with no hand edit since saves as it did: to the file and the service.
  await page.getByLabel('Editor').fill('zed');
  await page.getByRole('button', { name: 'Save' }).click();
  await expect.poll(() => page.getByText(/Saved to .* and the service\./).count(), SLOW).toBe(1);
  expect(JSON.parse(onDisk())).toEqual({ editor: 'zed', user: 'ada' });
  expect(onService()).toEqual({ editor: 'zed', user: 'ada' });
}, 180_000);
