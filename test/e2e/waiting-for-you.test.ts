import { existsSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createClient } from '../../src/client/index.ts';
import { buildRenderer, launchChromium } from '../support/browser.ts';
import { pictures, seriousViolations } from '../support/pictures.ts';
import { sha256 } from '../support/flows.ts';
import { makeRepo, serviceTree, type TestRepo } from '../support/repo.ts';
import { startTestService, type TestService } from '../support/service.ts';
import { addRepository, initGit, openWindow, type OpenWindow } from '../support/window.ts';

/**
 * Issue 24 in the window: a teammate's write and this checkout's edit of the same file are a conflict the window
 * lists, never "synced", settled with one click; a folder of 40 files removed at once is held, and put back with
 * one click. Pictures and axe as in test/support/pictures.ts.
 */
const IMAGES = pictures('waiting');
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
  const files: Record<string, string> = {
    'flows/ci/build.yml': 'steps:\n  - run: npm test\n',
    'flows/ci/deploy.yml': 'steps:\n  - run: ./deploy.sh\n',
  };
  for (let i = 0; i < 40; i++) files[`flows/generated/step-${i}.yml`] = `step: ${i}\n`;
  repo = makeRepo(files);
  initGit(repo);
  win = await openWindow(browser, svc, repo);
  page = win.page;
  await addRepository(page, repo.root, '42 files · 0 pending');
}, 120_000);
afterAll(async () => {
  IMAGES.cleanup();
  await win?.close();
  await svc?.close();
  repo?.cleanup();
  await browser?.close();
});

describe('what waits for the user, in the window', () => {
  it('a conflict is listed with who changed the service, never synced, and settled with one click', async () => {
    // Bob, on his checkout, changes build.yml on the service (on the version he had: no conflict for him).
    const bob = createClient({ baseUrl: svc.url, auth: { userToken: svc.tokens.user } });
    const before = 'steps:\n  - run: npm test\n';
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
    // Ada, who has not seen it, edits the same file.
    repo.write('flows/ci/build.yml', 'steps:\n  - run: npm test -- --coverage\n');
    const waiting = page.getByRole('region', { name: 'Waiting for you in acme/app' });
    await expect.poll(() => waiting.textContent(), SLOW).toContain('by bob@desk:~/code/app');
    await expect.poll(() => page.getByTestId('counts').textContent(), SLOW).toContain('1 in conflict');
    // Not "idle" while a conflict waits (issue 42): the badge says what needsOf says.
    await expect.poll(() => page.getByTestId('phase').textContent(), SLOW).toBe('waiting for you');
    await expect
      .poll(() => page.getByRole('list', { name: 'Recent activity' }).textContent(), SLOW)
      // Refused when sent; or, when her agent learned Bob's edit first (a look), a conflict as soon as she saved.
      .toMatch(
        /Conflict: flows\/ci\/build\.yml changed (on the service by|here and on the service \(by) bob@desk:~\/code\/app/,
      );
    // The disclosure's name is "▸ ci" ("ci" alone would also match "Take the service's").
    await page.getByRole('button', { name: /(^|\s)ci$/ }).click();
    await expect
      .poll(() => page.getByRole('list', { name: 'Files of ci' }).textContent(), SLOW)
      .toContain('build.yml conflict');
    await IMAGES.take(page, 'conflict');
    expect(await seriousViolations(page)).toEqual([]);

    // Compare: what Bob did and what was done here, each from the version last synced here.
    await waiting.getByRole('button', { name: 'Compare' }).click();
    const onService = waiting.getByRole('figure', { name: /^On the service \(changed by bob@desk/ });
    const here = waiting.getByRole('figure', { name: 'Here' });
    await expect.poll(() => onService.textContent(), SLOW).toContain('+  - run: npm ci');
    expect(await onService.locator('.diff-added').allTextContents()).toEqual(['+  - run: npm ci\n']);
    expect(await here.locator('.diff-removed').allTextContents()).toEqual(['-  - run: npm test\n']);
    expect(await here.locator('.diff-added').allTextContents()).toEqual([
      '+  - run: npm test -- --coverage\n',
    ]);
    await IMAGES.take(page, 'conflict-compare');
    expect(await seriousViolations(page)).toEqual([]);

    // Asked once: a no changes nothing.
    page.once('dialog', (dialog) => void dialog.dismiss());
    await waiting.getByRole('button', { name: "Take the service's" }).click();
    await expect.poll(() => page.getByTestId('counts').textContent(), SLOW).toContain('1 in conflict');
    expect(readFileSync(join(repo.root, 'flows/ci/build.yml'), 'utf8')).toBe(
      'steps:\n  - run: npm test -- --coverage\n',
    );
    // A yes: what was done here is kept before Bob's version replaces it (issue 41).
    const asked: string[] = [];
    page.once('dialog', (dialog) => {
      asked.push(dialog.message());
      void dialog.accept();
    });
    await waiting.getByRole('button', { name: "Take the service's" }).click();
    await expect.poll(() => page.getByTestId('counts').textContent(), SLOW).not.toContain('in conflict');
    expect(asked).toEqual([
      "Take the service's version of flows/ci/build.yml? What is on disk here is kept first: in the service's history as your conflict copy (or beside the file, on a service that keeps none).",
    ]);
    expect(readFileSync(join(repo.root, 'flows/ci/build.yml'), 'utf8')).toBe(his);
    await expect.poll(() => page.getByTestId('phase').textContent(), SLOW).toBe('in sync');
    await expect.poll(() => waiting.count(), SLOW).toBe(0);
    // Where it went, in Recent activity; the copy is in the file's history, and holds Ada's edit.
    const activity = page.getByRole('list', { name: 'Recent activity' });
    await expect
      .poll(() => activity.textContent(), SLOW)
      .toMatch(
        /Settled flows\/ci\/build\.yml: the service's version is on disk; yours is kept as version \d+ in the service's history/,
      );
    const copies = svc.read<{ content: string }>('SELECT content FROM file_versions WHERE conflict_copy = 1');
    expect(copies).toEqual([{ content: 'steps:\n  - run: npm test -- --coverage\n' }]);
  });

  it('a folder of 40 files removed at once is held, nothing deleted, and put back with one click', async () => {
    rmSync(join(repo.root, 'flows/generated'), { recursive: true });
    const waiting = page.getByRole('region', { name: 'Waiting for you in acme/app' });
    await expect.poll(() => waiting.textContent(), SLOW).toContain('40 deletions held');
    expect(Object.keys(serviceTree(svc.read, 'acme', 'app'))).toHaveLength(42);
    // Said in Recent activity too, with what to do (issue 41: an `rm` said nothing there).
    const activity = page.getByRole('list', { name: 'Recent activity' });
    await expect
      .poll(() => activity.textContent(), SLOW)
      .toContain(
        'Held: 40 deletions held, more than this repository deletes without asking; nothing deleted on the service',
      );
    await expect.poll(() => page.getByTestId('phase').textContent(), SLOW).toBe('waiting for you');
    await IMAGES.take(page, 'deletions-held');
    expect(await seriousViolations(page)).toEqual([]);

    page.once('dialog', (dialog) => void dialog.accept());
    await waiting.getByRole('button', { name: 'Restore them on disk' }).click();
    await expect.poll(() => existsSync(join(repo.root, 'flows/generated/step-39.yml')), SLOW).toBe(true);
    await expect.poll(() => page.getByTestId('counts').textContent(), SLOW).toContain('42 files · 0 pending');
    expect(readFileSync(join(repo.root, 'flows/generated/step-7.yml'), 'utf8')).toBe('step: 7\n');
    await expect
      .poll(() => activity.textContent(), SLOW)
      .toContain("Settled: 40 files whose deletion was held put back on disk from the service's copy");
  });

  it('files on the service this checkout never had are listed, and written to disk or deleted there', async () => {
    const bob = createClient({ baseUrl: svc.url, auth: { userToken: svc.tokens.user } });
    const write = (path: string, content: string) =>
      bob.flowDef.syncBatch(
        {
          repo_owner: 'acme',
          repo_name: 'app',
          flows: [
            { flow_path: 'flows/ci', files: [{ path, content, hash: sha256(content), base_hash: null }] },
          ],
        },
        { writer: 'bob@desk:~/code/app' },
      );
    const group = page.getByRole('group', { name: 'Files on the service not in this checkout' });
    const syncNow = () => page.getByRole('button', { name: 'Sync now' }).click();

    await write('lint.yml', 'lint: bob\n');
    await syncNow(); // the check of the service follows a round
    await expect
      .poll(() => group.textContent(), SLOW)
      .toContain('1 file on the service is not in this checkout');
    // Files not in this checkout count as waiting everywhere: the badge said "idle" (issue 42).
    await expect.poll(() => page.getByTestId('phase').textContent(), SLOW).toBe('waiting for you');
    expect(await seriousViolations(page)).toEqual([]);
    page.once('dialog', (dialog) => void dialog.accept());
    await group.getByRole('button', { name: 'Write them to disk' }).click();
    await expect.poll(() => existsSync(join(repo.root, 'flows/ci/lint.yml')), SLOW).toBe(true);
    expect(readFileSync(join(repo.root, 'flows/ci/lint.yml'), 'utf8')).toBe('lint: bob\n');
    await expect.poll(() => group.count(), SLOW).toBe(0);

    await write('stale.yml', 'stale: bob\n');
    await syncNow();
    await expect
      .poll(() => group.textContent(), SLOW)
      .toContain('1 file on the service is not in this checkout');
    // One click deletes nothing: it lists what would go, and asks (issue 41).
    await group.getByRole('button', { name: 'Delete them on the service' }).click();
    const asking = group.getByRole('dialog');
    await expect
      .poll(() => asking.getByRole('list', { name: 'Files to delete on the service' }).textContent(), SLOW)
      .toContain('flows/ci/stale.yml by bob@desk:~/code/app');
    await IMAGES.take(page, 'not-in-checkout-delete');
    expect(await seriousViolations(page)).toEqual([]);
    expect(serviceTree(svc.read, 'acme', 'app')['flows/ci/stale.yml']).toBe('stale: bob\n');
    await asking.getByRole('button', { name: 'Cancel' }).click();
    expect(await asking.count()).toBe(0);
    expect(serviceTree(svc.read, 'acme', 'app')['flows/ci/stale.yml']).toBe('stale: bob\n');
    await group.getByRole('button', { name: 'Delete them on the service' }).click();
    await asking.getByRole('button', { name: 'Delete it on the service' }).click();
    await expect.poll(() => serviceTree(svc.read, 'acme', 'app')['flows/ci/stale.yml'], SLOW).toBeUndefined();
    await expect
      .poll(() => page.getByRole('list', { name: 'Recent activity' }).textContent(), SLOW)
      .toContain(
        'Settled: 1 file not in this checkout deleted on the service, on your word: flows/ci/stale.yml',
      );
    await expect.poll(() => group.count(), SLOW).toBe(0);
    expect(existsSync(join(repo.root, 'flows/ci/stale.yml'))).toBe(false);
    await bob.close();
  });

  it("a file's versions are listed, read and restored from its row; a deleted file's from its path", async () => {
    const first = 'steps:\n  - run: ./deploy.sh\n';
    const second = 'steps:\n  - run: ./deploy.sh --prod\n';
    repo.write('flows/ci/deploy.yml', second);
    await expect.poll(() => serviceTree(svc.read, 'acme', 'app')['flows/ci/deploy.yml'], SLOW).toBe(second);
    const files = page.getByRole('list', { name: 'Files of ci' });
    if ((await files.count()) === 0) await page.getByRole('button', { name: /(^|\s)ci$/ }).click();
    await files.getByRole('button', { name: 'History of deploy.yml' }).click();
    const versions = page.getByRole('table', { name: 'Versions of flows/ci/deploy.yml' });
    await expect.poll(() => versions.getByRole('row').count(), SLOW).toBe(3); // a header, two versions
    const older = versions.getByRole('row').nth(2);
    await older.getByRole('button', { name: 'View' }).click();
    await expect
      .poll(
        () => page.getByRole('figure', { name: /^Version \d+ of flows\/ci\/deploy.yml$/ }).textContent(),
        SLOW,
      )
      .toContain('run: ./deploy.sh\n');
    await IMAGES.take(page, 'history');
    expect(await seriousViolations(page)).toEqual([]);

    page.once('dialog', (dialog) => void dialog.accept());
    await older.getByRole('button', { name: 'Restore' }).click();
    await expect.poll(() => readFileSync(join(repo.root, 'flows/ci/deploy.yml'), 'utf8'), SLOW).toBe(first);
    // Sent as an edit: the service has it again, as a third version.
    await expect.poll(() => serviceTree(svc.read, 'acme', 'app')['flows/ci/deploy.yml'], SLOW).toBe(first);
    await expect.poll(() => versions.getByRole('row').count(), SLOW).toBe(4);

    rmSync(join(repo.root, 'flows/ci/deploy.yml'));
    await expect
      .poll(() => serviceTree(svc.read, 'acme', 'app')['flows/ci/deploy.yml'], SLOW)
      .toBeUndefined();
    await page.getByText('History of a file (a deleted one too)').click();
    await page.getByRole('textbox', { name: 'File' }).fill('flows/ci/deploy.yml');
    await page.getByRole('button', { name: 'Show versions' }).click();
    const found = page.getByRole('table', { name: 'Versions of flows/ci/deploy.yml' }).last();
    await expect.poll(() => found.getByRole('row').nth(1).textContent(), SLOW).toContain('deleted');
    page.once('dialog', (dialog) => void dialog.accept());
    await found.getByRole('row').nth(2).getByRole('button', { name: 'Restore' }).click();
    await expect.poll(() => existsSync(join(repo.root, 'flows/ci/deploy.yml')), SLOW).toBe(true);
    expect(readFileSync(join(repo.root, 'flows/ci/deploy.yml'), 'utf8')).toBe(first);
    await expect.poll(() => serviceTree(svc.read, 'acme', 'app')['flows/ci/deploy.yml'], SLOW).toBe(first);
  });
});

describe('conflicts in several flows', () => {
  it("settles a flow's conflicts with one click, leaving the other flow's waiting", async () => {
    // Bob changes two files of flows/generated and one of flows/ci on the service; Ada edits the same three.
    const bob = createClient({ baseUrl: svc.url, auth: { userToken: svc.tokens.user } });
    const onService = serviceTree(svc.read, 'acme', 'app');
    const his = (path: string) => `${onService[path]}# bob\n`;
    const change = (flowPath: string, paths: string[]) => ({
      flow_path: flowPath,
      files: paths.map((path) => {
        const full = `${flowPath}/${path}`;
        return { path, content: his(full), hash: sha256(his(full)), base_hash: sha256(onService[full]!) };
      }),
    });
    await bob.flowDef.syncBatch(
      {
        repo_owner: 'acme',
        repo_name: 'app',
        flows: [change('flows/generated', ['step-1.yml', 'step-2.yml']), change('flows/ci', ['build.yml'])],
      },
      { writer: 'bob@desk:~/code/app' },
    );
    await bob.close();
    for (const path of ['flows/generated/step-1.yml', 'flows/generated/step-2.yml', 'flows/ci/build.yml'])
      repo.write(path, `${onService[path]}# ada\n`);
    const waiting = page.getByRole('region', { name: 'Waiting for you in acme/app' });
    await expect.poll(() => page.getByTestId('counts').textContent(), SLOW).toContain('3 in conflict');

    page.once('dialog', (dialog) => void dialog.accept());
    await waiting.getByRole('button', { name: 'Keep mine for the 2 in flows/generated' }).click();
    await expect.poll(() => page.getByTestId('counts').textContent(), SLOW).toContain('1 in conflict');
    await expect
      .poll(() => serviceTree(svc.read, 'acme', 'app')['flows/generated/step-2.yml'], SLOW)
      .toBe(`${onService['flows/generated/step-2.yml']}# ada\n`);
    // The other flow's conflict still waits, as it was.
    expect(serviceTree(svc.read, 'acme', 'app')['flows/ci/build.yml']).toBe(his('flows/ci/build.yml'));
    // The list is read again after the counts are pushed: it showed the three conflicts a moment longer (1 of 7
    // full runs clicked then, and found five such buttons).
    const takeTheirs = waiting.getByRole('button', {
      name: "Take the service's for flows/ci/build.yml",
      exact: true,
    });
    await expect.poll(() => takeTheirs.count(), SLOW).toBe(1);
    page.once('dialog', (dialog) => void dialog.accept());
    await takeTheirs.click();
    await expect.poll(() => waiting.count(), SLOW).toBe(0);
    expect(readFileSync(join(repo.root, 'flows/ci/build.yml'), 'utf8')).toBe(his('flows/ci/build.yml'));
  });
});

describe('an invalid hand edit of .flowsync/repo-config.json (issue 42 point 6)', () => {
  it('is on the card and in the badge, in words that name the field and what it should be', async () => {
    repo.write('.flowsync/repo-config.json', '{"editor": 3}\n');
    const problem = page.getByTestId('config-problem');
    await expect
      .poll(() => problem.textContent(), SLOW)
      .toBe('.flowsync/repo-config.json: editor: must be text (it is a number)');
    await expect.poll(() => page.getByTestId('phase').textContent(), SLOW).toBe('waiting for you');
    expect(await page.locator('body').textContent()).not.toMatch(/Invalid input|received|nonoptional/);
    expect(await seriousViolations(page)).toEqual([]);
    repo.write('.flowsync/repo-config.json', '{"editor": "code"}\n');
    await expect.poll(() => problem.count(), SLOW).toBe(0);
    await expect.poll(() => page.getByTestId('phase').textContent(), SLOW).toBe('in sync');
  });
});

describe('long files in Compare and in a version viewed (issue 42 point 8)', () => {
  it('each pane that scrolls is reached from the keyboard, and each row button names its file: axe, light and dark', async () => {
    // 60 lines of 160 characters: both panes and the version scroll, down and across.
    const long = (who: string) =>
      Array.from({ length: 60 }, (_, n) => `step_${n}: ${who} ${'x'.repeat(150)}\n`).join('');
    repo.write('flows/ci/long.yml', long('base'));
    await expect
      .poll(() => serviceTree(svc.read, 'acme', 'app')['flows/ci/long.yml'], SLOW)
      .toBe(long('base'));
    const bob = createClient({ baseUrl: svc.url, auth: { userToken: svc.tokens.user } });
    await bob.flowDef.syncBatch(
      {
        repo_owner: 'acme',
        repo_name: 'app',
        flows: [
          {
            flow_path: 'flows/ci',
            files: [
              {
                path: 'long.yml',
                content: long('bob'),
                hash: sha256(long('bob')),
                base_hash: sha256(long('base')),
              },
            ],
          },
        ],
      },
      { writer: 'bob@desk:~/code/app' },
    );
    await bob.close();
    repo.write('flows/ci/long.yml', long('ada'));
    const waiting = page.getByRole('region', { name: 'Waiting for you in acme/app' });
    const row = waiting.getByRole('row', { name: /long\.yml/ });
    await expect.poll(() => row.count(), SLOW).toBe(1);
    // Named with the file, each of them (they were "Compare", "Keep mine", "Take the service's" on every row).
    await row.getByRole('button', { name: 'Compare flows/ci/long.yml', exact: true }).click();
    await expect
      .poll(() => waiting.getByRole('figure', { name: 'Here' }).textContent(), SLOW)
      .toContain('ada');
    expect(await seriousViolations(page)).toEqual([]);
    // Taking the service's asks first (issue 41: it wrote over an unsent edit without a word).
    page.once('dialog', (dialog) => void dialog.accept());
    await row.getByRole('button', { name: "Take the service's for flows/ci/long.yml", exact: true }).click();
    await expect.poll(() => waiting.count(), SLOW).toBe(0);

    const files = page.getByRole('list', { name: 'Files of ci' });
    if ((await files.count()) === 0) await page.getByRole('button', { name: /(^|\s)ci$/ }).click();
    await files.getByRole('button', { name: 'History of long.yml' }).click();
    const versions = page.getByRole('table', { name: 'Versions of flows/ci/long.yml' });
    // A header, Ada's edit kept as her conflict copy (issue 41), Bob's version, the base.
    await expect.poll(() => versions.getByRole('row').count(), SLOW).toBe(4);
    // The oldest version, as the service numbers it; its buttons name it and the file.
    const older = versions.getByRole('row').nth(3);
    await older.getByRole('button', { name: /^View version \d+ of flows\/ci\/long\.yml$/ }).click();
    await expect
      .poll(
        () => page.getByRole('figure', { name: /^Version \d+ of flows\/ci\/long\.yml$/ }).textContent(),
        SLOW,
      )
      .toContain('step_59: base');
    expect(
      await older.getByRole('button', { name: /^Restore version \d+ of flows\/ci\/long\.yml$/ }).count(),
    ).toBe(1);
    expect(await seriousViolations(page)).toEqual([]);
  });
});
