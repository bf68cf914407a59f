import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Browser, BrowserContextOptions, Page } from 'playwright-core';
import { expect } from 'vitest';
import { connectToBridge, type Bridge } from '../../src/window/index.ts';
import { startAgentProcess, userEnv, type AgentProcess } from './agent-process.ts';
import { request } from './loopback.ts';
import { eventually, type TestRepo } from './repo.ts';
import type { TestService } from './service.ts';

/** The window's viewport in the e2e tests and in the README's pictures. */
export const VIEWPORT = { width: 1280, height: 860 };

export interface OpenWindow {
  /** The agent running now. */
  readonly agent: AgentProcess;
  page: Page;
  address: string;
  close(): Promise<void>;
}

/** Makes a folder a git repository with origin `acme/app` and an author, as the tests' repositories are. */
export function initGit(repo: TestRepo): void {
  execFileSync('git', ['-C', repo.root, 'init', '-q']);
  execFileSync('git', ['-C', repo.root, 'remote', 'add', 'origin', 'git@github.com:acme/app.git']);
  execFileSync('git', ['-C', repo.root, 'config', 'user.email', 'ada@example.com']);
}

/**
 * A new address that opens the window of the agent running with this environment, once: what `flowsync ui --open`
 * opens, asked for as it asks (the agent lock holds the bridge's address and agent token). Waits for the window's
 * line first, which the agent prints once its bridge listens.
 */
export async function launchAddress(agent: AgentProcess, env: NodeJS.ProcessEnv): Promise<string> {
  await agent.waitFor(/Window: (\S+)/);
  const lock = JSON.parse(readFileSync(join(env.XDG_DATA_HOME!, 'flowsync', 'agent.lock'), 'utf8')) as {
    bridge: string;
  };
  return connectToBridge(lock.bridge).launchUrl();
}

/** What a page opened on a launch address of this bridge does first: trades the launch token for a session. */
export async function windowSession(bridge: Bridge): Promise<string> {
  const launch = new URL(bridge.launchUrl()).hash.replace('#token=', '');
  const origin = new URL(bridge.address).origin;
  const response = await request(`${origin}/api/session`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', origin },
    body: JSON.stringify({ launch }),
  });
  return ((await response.body.json()) as { value: { session: string } }).value.session;
}

/**
 * `flowsync ui` as a user runs it, against the test's service with its tokens in the environment, and a page
 * (light theme, the README's viewport) open on a launch address, as `flowsync ui --open` opens it. `browsing`: the
 * browser's own settings for the page (a permission granted) and a script it runs before the window's.
 */
export async function openWindow(
  browser: Browser,
  svc: Pick<TestService, 'url' | 'tokens'>,
  repo: TestRepo,
  browsing: { options?: BrowserContextOptions; initScript?: string; env?: NodeJS.ProcessEnv } = {},
): Promise<OpenWindow> {
  const env = {
    ...userEnv(join(repo.dir, 'home'), svc),
    FLOWSYNC_ADMIN_TOKEN: svc.tokens.admin,
    ...browsing.env,
  };
  return openWindowAs(browser, env, browsing);
}

/**
 * `flowsync ui` run with this environment (a user of a team, with their own service and HOME), and a page open on
 * its window as `flowsync ui --open` opens it: what openWindow does for the user of a test service.
 */
export async function openWindowAs(
  browser: Browser,
  env: NodeJS.ProcessEnv,
  browsing: { options?: BrowserContextOptions; initScript?: string } = {},
): Promise<OpenWindow> {
  const agent = startAgentProcess(['ui'], env);
  const address = await launchAddress(agent, env);
  const page = await browser.newPage({ viewport: VIEWPORT, colorScheme: 'light', ...browsing.options });
  if (browsing.initScript) await page.addInitScript(browsing.initScript);
  await page.goto(address);
  return {
    agent,
    page,
    address,
    async close() {
      await page.close();
      agent.signal('SIGINT');
      await agent.exited;
    },
  };
}

/** Adds the repository on the Sync screen, as a user does, and waits for its first sync. */
export async function addRepository(page: Page, root: string, counts: string): Promise<void> {
  await page.getByLabel('Repository folder').fill(root);
  await page.getByRole('button', { name: 'Add folder' }).click();
  // eventually, not expect.poll: this also runs in set-up hooks. Each look is short, so that the 30 s are retries.
  try {
    await eventually(
      async () => expect(await page.getByTestId('counts').textContent({ timeout: 1000 })).toContain(counts),
      30_000,
    );
    // The add has ended once the form let go of the folder (it empties the field on success): the counts can show
    // before that. A folder typed meanwhile was once wiped by that emptying, so the next Add sent nothing (the
    // worktree card of two-checkouts.test.ts never came, 2 full suites in about 10); the field now keeps it
    // (what-is-in-sync.test.ts, "the folder field"), and a set-up that returns here starts from an empty one.
    await eventually(
      async () => expect(await page.getByLabel('Repository folder').inputValue({ timeout: 1000 })).toBe(''),
      30_000,
    );
  } catch (error) {
    // What the user would see instead: the button still "Adding…", an error line, or no repository at all.
    const screen = await page
      .locator('main')
      .innerText({ timeout: 1000 })
      .catch(() => '(no screen)');
    const typed = await page
      .getByLabel('Repository folder')
      .inputValue({ timeout: 1000 })
      .catch(() => '?');
    throw new Error(`${String(error)}\nThe folder field holds "${typed}"; the screen shows:\n${screen}`);
  }
}

/**
 * The session a page holds, which it keeps in its memory only (renderer/src/api.ts): read from its requests, which
 * carry it (the event stream, opened first, in its query). Call before the page opens the window.
 */
export function watchSession(page: Page): () => string {
  let session = '';
  page.on('request', (request) => {
    const url = new URL(request.url());
    const header = /^Bearer (\S+)$/.exec(request.headers().authorization ?? '')?.[1];
    if (url.pathname === '/api/events' && url.searchParams.get('token'))
      session = url.searchParams.get('token')!;
    else if (header) session = header;
  });
  return () => session;
}
