import { chmodSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  agentOnService,
  startAgentProcess,
  userEnv,
  type AgentOnService,
  type AgentProcess,
} from '../support/agent-process.ts';
import { buildRenderer, launchChromium } from '../support/browser.ts';
import { runFlowsync } from '../support/cli.ts';
import type { TestRepo } from '../support/repo.ts';
import type { TestService } from '../support/service.ts';
import { seriousViolations } from '../support/pictures.ts';
import { launchAddress } from '../support/window.ts';

/**
 * The window's token where it used to linger: the browser's address bar and history, `flowsync status`, and the
 * agent's stdout when nobody reads it at a terminal (an autostart entry's journal, a pipe). Each test is the
 * attack: read the token where it is left, and use it.
 */
let browser: Browser;
let user: AgentOnService;
let svc: TestService;
let repo: TestRepo;
let agent: AgentProcess;
let env: NodeJS.ProcessEnv;

beforeAll(async () => {
  buildRenderer();
  browser = await launchChromium();
  user = await agentOnService();
  ({ svc, repo, env } = user);
  agent = user.run(['ui']);
}, 120_000);
afterAll(async () => {
  await browser?.close();
  await user?.close();
});

/** The page's session history as the browser keeps it (the entries Back and Forward walk), read over CDP. */
async function historyEntries(page: Page): Promise<string[]> {
  const cdp = await page.context().newCDPSession(page);
  const { entries } = (await cdp.send('Page.getNavigationHistory')) as { entries: { url: string }[] };
  await cdp.detach();
  return entries.map((entry) => entry.url);
}

/** Whether the window shows the app (its tabs), rather than a refusal. */
const showsApp = (page: Page) => page.getByRole('tab', { name: 'Settings' }).isVisible();

describe("the window's launch token", () => {
  it('opens the window once; then neither the address bar nor the history holds it, and a reload still works', async () => {
    const address = await launchAddress(agent, env);
    const token = new URL(address).hash.replace('#token=', '');
    const page = await browser.newPage();
    await page.goto(address);
    await expect.poll(() => showsApp(page), { timeout: 20_000 }).toBe(true);
    await expect.poll(() => page.evaluate('location.href')).toBe(`${new URL(address).origin}/`);
    expect((await historyEntries(page)).join('\n')).not.toContain(token);

    await page.reload();
    await page.getByRole('tab', { name: 'Settings' }).click();
    await expect.poll(() => page.getByRole('checkbox', { name: 'Start at login' }).isEnabled()).toBe(true);
    expect(await page.getByRole('alert').count()).toBe(0);
    await page.close();
  });

  it('refuses the same launch address opened a second time, as from the history', async () => {
    const address = await launchAddress(agent, env);
    const first = await browser.newPage();
    await first.goto(address);
    await expect.poll(() => showsApp(first), { timeout: 20_000 }).toBe(true);

    const second = await browser.newPage();
    await second.goto(address);
    await expect.poll(() => second.getByRole('alert').textContent()).toContain('already used');
    expect(await showsApp(second)).toBe(false);
    // The refusal is a screen too: axe, light and dark.
    expect(await seriousViolations(second)).toEqual([]);
    // Nor can the token be used as a credential by itself.
    const token = new URL(address).hash.replace('#token=', '');
    const status = await second.evaluate(
      async (secret) =>
        (
          await fetch('/api/status', {
            method: 'POST',
            headers: { 'content-type': 'application/json', authorization: `Bearer ${secret}` },
            body: '{}',
          })
        ).status,
      token,
    );
    expect(status).toBe(401);
    await first.close();
    await second.close();
  });

  it('opened again in a tab that holds a session of this agent, uses that session (it answered 401)', async () => {
    const address = await launchAddress(agent, env);
    const page = await browser.newPage();
    await page.goto(address);
    await expect.poll(() => showsApp(page), { timeout: 20_000 }).toBe(true);
    // Away and back to the stale address in the same tab (a bookmark, the history): a page load of its own.
    await page.goto('about:blank');
    await page.goto(address);
    await expect.poll(() => showsApp(page), { timeout: 20_000 }).toBe(true);
    expect(await page.getByRole('alert').count()).toBe(0);
    await page.getByRole('tab', { name: 'Settings' }).click();
    await expect.poll(() => page.getByRole('checkbox', { name: 'Start at login' }).isEnabled()).toBe(true);
    await page.close();
  });

  it('is not printed by the agent when its stdout is not a terminal, nor by `flowsync status`', async () => {
    await agent.waitFor(/Window: (\S+)/);
    const lock = readFileSync(join(env.XDG_DATA_HOME!, 'flowsync', 'agent.lock'), 'utf8');
    const origin = new URL((JSON.parse(lock) as { bridge: string }).bridge).origin;
    expect(agent.output()).toContain(`Window: ${origin}/ (\`flowsync ui --open\` opens it)\n`);
    expect(agent.output()).not.toContain('token=');

    const status = await runFlowsync(['status'], { env });
    expect(status.code, status.stderr).toBe(0);
    expect(status.stdout).toContain(`window ${origin}/ `);
    // The window's token, in any form an address carries it ("the shared user token" is status's first line).
    expect(status.stdout).not.toMatch(/token=|#token/);
  });

  it('`flowsync ui --open` opens a new window of the running agent with $BROWSER', async () => {
    const opened = join(repo.dir, 'opened.txt');
    const opener = join(repo.dir, 'browser.sh');
    writeFileSync(opener, `#!/bin/sh\nprintf '%s\\n' "$1" >> '${opened}'\n`);
    chmodSync(opener, 0o755);

    const run = await runFlowsync(['ui', '--open'], { env: { ...env, BROWSER: opener } });
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).not.toContain('token=');
    expect(run.stdout).toContain('(opened in your browser)');
    const address = readFileSync(opened, 'utf8').trim();
    expect(address).toMatch(/^http:\/\/[a-z0-9]+\.localhost:\d+\/#token=[\w-]+$/);

    const page = await browser.newPage();
    await page.goto(address);
    await expect.poll(() => showsApp(page), { timeout: 20_000 }).toBe(true);
    await page.close();
  });

  it('`flowsync ui --open` without a running agent starts one and opens its window', async () => {
    const opened = join(repo.dir, 'opened-fresh.txt');
    const opener = join(repo.dir, 'browser-fresh.sh');
    writeFileSync(opener, `#!/bin/sh\nprintf '%s\\n' "$1" >> '${opened}'\n`);
    chmodSync(opener, 0o755);
    const fresh = startAgentProcess(['ui', '--open'], {
      ...userEnv(join(repo.dir, 'fresh-home'), svc),
      BROWSER: opener,
    });
    try {
      await fresh.waitFor(/Window: http:\/\/[a-z0-9]+\.localhost:\d+\/ \(opened in your browser\)\n/);
      expect(fresh.output()).not.toContain('token=');
      const page = await browser.newPage();
      await page.goto(readFileSync(opened, 'utf8').trim());
      await expect.poll(() => showsApp(page), { timeout: 20_000 }).toBe(true);
      await page.close();
    } finally {
      fresh.signal('SIGINT');
      await fresh.exited;
    }
  });
});
