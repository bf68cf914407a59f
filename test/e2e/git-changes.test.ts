import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startAgentProcess, type AgentProcess } from '../support/agent-process.ts';
import { buildRenderer, launchChromium } from '../support/browser.ts';
import { pictures, seriousViolations } from '../support/pictures.ts';
import { eventually } from '../support/repo.ts';
import { startTeam, type Developer, type Team } from '../support/team.ts';
import { openWindowAs } from '../support/window.ts';

/**
 * Issue 46 in the window: git's motions on a shared service are one change set held for its user, and the window
 * has the two buttons `sync --yes` and `sync --keep` are. Ada and Bob on one `flowsync serve`, each a clone and a
 * running agent (Bob's is `flowsync ui`, his window in Chromium). Bob switches to a branch that changes one file
 * and deletes six: the card names the set and lists its files; "Send to the team" asks first, naming the branch
 * and the teammates, and Cancel sends nothing; "Keep it here" keeps it; a second switch, sent, reaches the service.
 */
const IMAGES = pictures('git-changes');
const SLOW = { timeout: 30_000 };
const OLD = Object.fromEntries(
  Array.from({ length: 6 }, (_, n) => [`flows/old/step-${n}.yml`, `step: ${n}\n`]),
);
const FILES = { 'flows/ci/build.yml': 'build: 1\n', 'flows/ci/test.yml': 'test: 1\n', ...OLD };

let browser: Browser;
let team: Team;
let ada: Developer;
let bob: Developer;
const agents: AgentProcess[] = [];
let page: Page;

beforeAll(async () => {
  buildRenderer();
  browser = await launchChromium();
  team = await startTeam(FILES);
  ada = team.person('ada');
  bob = team.person('bob');
  // Bob's branch, made before his agent runs: it changes build.yml and deletes the old flow.
  bob.git('checkout', '-q', '-b', 'cleanup');
  writeFileSync(join(bob.root, 'flows/ci/build.yml'), 'build: cleanup\n');
  bob.remove('flows/old');
  bob.git('add', '-A');
  bob.git('commit', '-q', '-m', 'cleanup');
  bob.git('checkout', '-q', 'main');

  const adas = startAgentProcess(['start', ada.root], ada.env);
  agents.push(adas);
  await adas.waitFor(/Watching 1 repository/, 60_000);
  await eventually(() => expect(Object.keys(team.stored())).toHaveLength(8), 30_000);

  const bobs = await openWindowAs(browser, bob.env);
  agents.push(bobs.agent);
  page = bobs.page;
  await eventually(
    async () =>
      expect(await page.getByTestId('counts').textContent({ timeout: 1000 })).toContain(
        '8 files · 0 pending',
      ),
    60_000,
  );
}, 180_000);
afterAll(async () => {
  IMAGES.cleanup();
  await page?.close();
  for (const agent of agents.splice(0)) {
    agent.signal('SIGINT');
    await agent.exitWithin(10_000);
  }
  await team?.close();
  await browser?.close();
});

describe("git's change sets held in the window", () => {
  it('a branch switch is a card naming the set and its files; Send asks first naming the branch and the teammates; Keep it here keeps it', async () => {
    const before = team.stored();
    bob.git('checkout', '-q', 'cleanup');
    const card = page.getByRole('group', { name: 'branch cleanup: 1 changed, 6 deleted' });
    await expect.poll(() => card.count(), SLOW).toBe(1);
    await expect.poll(() => page.getByTestId('phase').textContent(), SLOW).toBe('waiting for you');
    // The files, collapsed: one line opens them.
    const files = card.getByRole('list', { name: 'Files of branch cleanup' });
    expect(await files.isVisible()).toBe(false);
    await card.getByText('7 files').click();
    await expect.poll(() => files.getByRole('listitem').count(), SLOW).toBe(7);
    expect(await files.textContent()).toContain('flows/ci/build.yml changed');
    expect(await files.textContent()).toContain('flows/old/step-0.yml deleted');
    expect(await seriousViolations(page)).toEqual([]);

    // Send asks first: the branch, what the team gets, and who.
    const teammates = (await bob.bridge().status()).repositories[0]!.teammates ?? [];
    expect(teammates).toHaveLength(1);
    await card.getByRole('button', { name: 'Send to the team' }).click();
    const dialog = page.getByRole('dialog', { name: /branch cleanup/ });
    await expect.poll(() => dialog.count(), SLOW).toBe(1);
    const asked = (await dialog.textContent()) ?? '';
    expect(asked).toContain('Send the changes of branch cleanup to the team?');
    expect(asked).toContain(teammates[0]!);
    expect(asked).toContain('1 changed, 6 deleted');
    await IMAGES.take(page, 'git-changes-send');
    expect(await seriousViolations(page)).toEqual([]);
    await dialog.getByRole('button', { name: 'Cancel' }).click();
    expect(await dialog.count()).toBe(0);
    expect(await card.count()).toBe(1);
    expect(team.stored()).toEqual(before);

    // Keep it here: no longer asked, not sent.
    await card.getByRole('button', { name: 'Keep it here' }).click();
    await expect.poll(() => card.count(), SLOW).toBe(0);
    await expect
      .poll(() => page.getByRole('list', { name: 'Recent activity' }).textContent(), SLOW)
      .toContain('branch cleanup: 1 changed, 6 deleted kept here, not sent, on your word');
    await expect.poll(() => page.getByTestId('phase').textContent(), SLOW).not.toBe('waiting for you');
    expect(team.stored()).toEqual(before);
  });

  it('Send to the team, confirmed, sends the set: the service has the branch, and Recent activity says so', async () => {
    // Back on main: as the service has it, the kept set is gone. Then the branch again: a new set, held.
    bob.git('checkout', '-q', 'main');
    await expect.poll(() => page.getByTestId('phase').textContent(), SLOW).toBe('in sync');
    bob.git('checkout', '-q', 'cleanup');
    const card = page.getByRole('group', { name: 'branch cleanup: 1 changed, 6 deleted' });
    await expect.poll(() => card.count(), SLOW).toBe(1);
    await card.getByRole('button', { name: 'Send to the team' }).click();
    const dialog = page.getByRole('dialog', { name: /branch cleanup/ });
    await dialog.getByRole('button', { name: 'Send 7 files' }).click();
    await expect
      .poll(() => team.stored(), SLOW)
      .toEqual({ 'flows/ci/build.yml': 'build: cleanup\n', 'flows/ci/test.yml': 'test: 1\n' });
    await expect.poll(() => card.count(), SLOW).toBe(0);
    await expect
      .poll(() => page.getByRole('list', { name: 'Recent activity' }).textContent(), SLOW)
      .toContain('branch cleanup: 1 changed, 6 deleted sent to the team, on your word');
  });
});
