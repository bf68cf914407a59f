import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { agentOnService, type AgentOnService, type AgentProcess } from '../support/agent-process.ts';
import { buildRenderer, launchChromium } from '../support/browser.ts';
import { FLOWSYNC_BIN } from '../support/cli.ts';
import { launchAddress } from '../support/window.ts';

let browser: Browser;
let user: AgentOnService;
let agent: AgentProcess;
let address: string;
let page: Page;
let env: NodeJS.ProcessEnv;
let entryPath: string;

beforeAll(async () => {
  buildRenderer();
  browser = await launchChromium();
  user = await agentOnService();
  const runtime = join(user.repo.dir, 'run');
  mkdirSync(runtime);
  // No systemd user instance to reach (as in test/cli/autostart.test.ts): the agent takes the XDG path, and
  // the test never enables a unit in this machine's own systemd.
  const noSystemd = {
    XDG_RUNTIME_DIR: runtime,
    DBUS_SESSION_BUS_ADDRESS: `unix:path=${join(runtime, 'no-bus')}`,
  };
  env = { ...user.env, ...noSystemd };
  entryPath = join(user.home, '.config/autostart/flowsync.desktop');
  agent = user.run(['ui'], noSystemd);
  const launch = await launchAddress(agent, env);
  address = `${new URL(launch).origin}/`;
  page = await browser.newPage();
  await page.goto(launch);
}, 120_000);
afterAll(async () => {
  await browser?.close();
  await user?.close();
});

/** The Exec line's words as a desktop session reads them: double quotes group, a backslash escapes. */
function execWords(entry: string): string[] {
  const line = entry.split('\n').find((l) => l.startsWith('Exec='));
  if (!line) throw new Error(`no Exec line in\n${entry}`);
  const value = line.slice('Exec='.length).replace(/\\\\/g, '\\');
  return [...value.matchAll(/"((?:[^"\\]|\\.)*)"/g)].map((m) => m[1]!.replace(/\\(.)/g, '$1'));
}

describe('Settings: Start at login', () => {
  it('ticked, writes the entry that runs the agent; unticked, removes it', async () => {
    await page.getByRole('tab', { name: 'Settings' }).click();
    const box = page.getByRole('checkbox', { name: 'Start at login' });
    await expect.poll(() => box.isEnabled(), { timeout: 20_000 }).toBe(true);
    expect(await box.isChecked()).toBe(false);
    expect(existsSync(entryPath)).toBe(false);

    await box.check();
    await expect.poll(() => existsSync(entryPath), { timeout: 20_000 }).toBe(true);
    await expect.poll(() => box.isChecked(), { timeout: 20_000 }).toBe(true);
    await expect.poll(() => page.getByTestId('start-at-login').textContent()).toContain(entryPath);
    const words = execWords(readFileSync(entryPath, 'utf8'));
    expect(words).toEqual([process.execPath, FLOWSYNC_BIN, 'ui']);
    // Run as the session would at login: with this agent running, it is an agent that finds it and shows its
    // window, which proves the entry starts this flowsync.
    const run = spawnSync(words[0]!, words.slice(1), {
      env: { ...process.env, ...env },
      encoding: 'utf8',
      timeout: 30_000,
    });
    expect(run.status, run.stderr).toBe(0);
    // What the session's log gets from the entry's stdout: the address, and no token that opens the window.
    expect(run.stdout).toContain(`Window: ${address} (\`flowsync ui --open\` opens it)`);
    expect(`${run.stdout}${run.stderr}`).not.toContain('token=');

    await box.uncheck();
    await expect.poll(() => existsSync(entryPath), { timeout: 20_000 }).toBe(false);
    await expect.poll(() => box.isChecked(), { timeout: 20_000 }).toBe(false);
  }, 120_000);
});
