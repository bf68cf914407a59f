import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { agentOnService, type AgentOnService, type AgentProcess } from '../support/agent-process.ts';
import { buildRenderer, launchChromium } from '../support/browser.ts';
import { launchAddress } from '../support/window.ts';

const BUILT_PAGE = fileURLToPath(new URL('../../renderer/dist/index.html', import.meta.url));

let browser: Browser;
let user: AgentOnService;
let agent: AgentProcess;
let env: NodeJS.ProcessEnv;

beforeAll(async () => {
  buildRenderer();
  browser = await launchChromium();
  user = await agentOnService();
  env = user.env;
  agent = user.run(['ui']);
}, 120_000);
afterAll(async () => {
  await browser?.close();
  await user?.close();
});

/** The policy's directives by name, e.g. `style-src` → `['self']` without quotes. */
function directives(policy: string): Map<string, string[]> {
  return new Map(
    policy
      .split(';')
      .map((part) => part.trim().split(/\s+/))
      .filter(([name]) => name)
      .map(([name, ...values]) => [name!, values.map((value) => value.replaceAll("'", ''))]),
  );
}

describe('the window under a CSP without inline styles or scripts', () => {
  it("allows no 'unsafe-inline' in the built page's policy (Electron's) nor in the bridge's header", async () => {
    const meta = /http-equiv="Content-Security-Policy"\s+content="([^"]+)"/.exec(
      readFileSync(BUILT_PAGE, 'utf8'),
    )?.[1];
    const page = await browser.newPage();
    const response = await page.goto(await launchAddress(agent, env));
    const header = (await response!.allHeaders())['content-security-policy'];
    await page.close();
    for (const policy of [meta, header]) {
      expect(policy).toBeDefined();
      expect(policy).not.toContain('unsafe-inline');
      expect(directives(policy!).get('style-src')).toEqual(['self']);
      expect(directives(policy!).get('script-src')).toEqual(['self']);
    }
  });

  it('shows every screen, styled, without one violation of that policy', async () => {
    const page = await browser.newPage();
    // Collected in the page from its first script on: the browser reports each blocked style or script here.
    // (Strings, because the tests are type-checked without the DOM's types.)
    await page.addInitScript({
      content: `window.violations = [];
        document.addEventListener('securitypolicyviolation', (event) =>
          window.violations.push(event.violatedDirective + ' ' + event.blockedURI + ' ' + event.sample));`,
    });
    await page.goto(await launchAddress(agent, env));
    for (const name of ['Sync', 'Tasks', 'Repo config', 'Settings']) {
      await page.getByRole('tab', { name }).click();
      await expect.poll(() => page.getByRole('tab', { name }).getAttribute('aria-selected')).toBe('true');
    }
    // styles.css applied: the browser's default body margin is 8px, the stylesheet's 0.
    expect(await page.evaluate('getComputedStyle(document.body).margin')).toBe('0px');
    expect(await page.evaluate('window.violations')).toEqual([]);
    await page.close();
  });
});
