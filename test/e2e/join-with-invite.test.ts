import type { Browser } from 'playwright-core';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { join } from 'node:path';
import { userEnv } from '../support/agent-process.ts';
import { buildRenderer, launchChromium } from '../support/browser.ts';
import { runFlowsync } from '../support/cli.ts';
import { inviteMember } from '../support/members.ts';
import { seriousViolations } from '../support/pictures.ts';
import { makeRepo, type TestRepo } from '../support/repo.ts';
import { callFunction, startTestService, type TestService } from '../support/service.ts';
import { openWindow, type OpenWindow } from '../support/window.ts';

/**
 * Settings → Service on a team's service (issue 48): a person signed in with the team's shared token (as everyone
 * was before members) is told their writes show as "shared", pastes the invite an operator sent, and is signed in
 * as themselves ("You are alice (can read and write)"), the token in their keychain alone; the agent writes as alice
 * from then on. An invite used once says so, and nothing is kept.
 */
const SLOW = { timeout: 30_000 };

let browser: Browser;
let svc: TestService;
let repo: TestRepo;
let win: OpenWindow | null = null;

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
  repo?.cleanup();
  await svc?.close();
});

/** The window of an agent of `svc` signed in with the shared user token, kept in the keychain by `flowsync login`. */
async function settingsWithSharedToken() {
  svc = await startTestService();
  repo = makeRepo({ 'flows/ci/build.yml': 'build: 1\n' });
  const env = {
    ...userEnv(join(repo.dir, 'home')),
    FLOWSYNC_URL: svc.url,
    FLOWSYNC_TOKEN: '',
    FLOWSYNC_ADMIN_TOKEN: '',
  };
  const login = await runFlowsync(['login'], { env, stdin: `${svc.tokens.user}\n` });
  expect(login.code, login.stderr).toBe(0);
  win = await openWindow(browser, svc, repo, { env: { FLOWSYNC_TOKEN: '', FLOWSYNC_ADMIN_TOKEN: '' } });
  await win.page.getByRole('tab', { name: 'Settings' }).click();
  await expect.poll(() => win!.page.getByTestId('service-in-use').textContent(), SLOW).not.toContain('…');
  return win.page;
}

describe('joining a team from Settings with an invite', () => {
  it('signs alice in as herself, and the agent then writes as alice', async () => {
    const page = await settingsWithSharedToken();
    const invite = await inviteMember(svc.url, `Admin ${svc.tokens.admin}`, 'alice', 'write');
    await expect
      .poll(() => page.getByTestId('member').textContent(), SLOW)
      .toBe(
        'Signed in with the team’s shared token: your writes show as “shared”. Ask an operator for an invite of your own.',
      );

    await page.getByLabel('Join with an invite').fill(invite);
    await page.getByRole('button', { name: 'Join' }).click();
    await expect
      .poll(() => page.getByTestId('member').textContent(), SLOW)
      .toMatch(/^You are alice \(can read and write\) · token “[^”]+” · expires \d{1,2} \w{3} \d{4}$/);
    // The invite left the form with its use; the field is gone once she is someone.
    expect(await page.getByLabel('Join with an invite').count()).toBe(0);
    expect(await page.locator('[role=alert]').count()).toBe(0);
    expect(await seriousViolations(page)).toEqual([]);

    // The service takes the window's agent for alice: the repository it adds is written by her.
    await page.getByRole('tab', { name: 'Sync' }).click();
    await page.getByLabel('Repository folder').fill(repo.root);
    await page.getByRole('button', { name: 'Add folder' }).click();
    await expect
      .poll(
        () =>
          svc.read<{ path: string; name: string | null }>(
            `SELECT v.path, m.name FROM file_versions v LEFT JOIN members m ON m.id = v.member_id`,
          ),
        SLOW,
      )
      .toEqual([{ path: 'build.yml', name: 'alice' }]);
  });

  it('an invite already used is refused with the service’s words, and nothing is kept', async () => {
    const page = await settingsWithSharedToken();
    const invite = await inviteMember(svc.url, `Admin ${svc.tokens.admin}`, 'bob', 'write');
    const first = await callFunction(svc.url, `Bearer ${invite}`, 'svc/members/action/redeem_invite/run', {
      label: 'elsewhere',
    });
    expect(first.statusCode).toBe(200);

    await expect.poll(() => page.getByLabel('Join with an invite').count(), SLOW).toBe(1);
    await page.getByLabel('Join with an invite').fill(invite);
    await page.getByRole('button', { name: 'Join' }).click();
    await expect
      .poll(() => page.locator('[data-testid=service-member] [role=alert]').textContent(), SLOW)
      .toMatch(/used/i);
    // Still the shared token: the one in the keychain was not replaced.
    expect(await page.getByTestId('member').textContent()).toContain('shared token');
  });

  it('a paste cut short is refused before it is sent', async () => {
    const page = await settingsWithSharedToken();
    const invite = await inviteMember(svc.url, `Admin ${svc.tokens.admin}`, 'carol', 'read');
    await expect.poll(() => page.getByLabel('Join with an invite').count(), SLOW).toBe(1);
    await page.getByLabel('Join with an invite').fill(invite.slice(0, -4));
    await page.getByRole('button', { name: 'Join' }).click();
    await expect.poll(() => page.locator('[data-testid=service-member] [role=alert]').count(), SLOW).toBe(1);
    // Not spent: it still works for carol.
    const later = await callFunction(svc.url, `Bearer ${invite}`, 'svc/members/action/redeem_invite/run', {
      label: 'laptop',
    });
    expect(later.statusCode).toBe(200);
  });
});
