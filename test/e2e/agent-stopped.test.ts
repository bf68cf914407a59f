import { readdirSync, readFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import { join } from 'node:path';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createUnixUser, type UnixUser } from '../support/unix-user.ts';
import {
  agentOnService,
  writeAgentConfig,
  type AgentOnService,
  type AgentProcess,
} from '../support/agent-process.ts';
import { buildRenderer, launchChromium } from '../support/browser.ts';
import { pictures, seriousViolations } from '../support/pictures.ts';
import { request } from '../support/loopback.ts';
import { initGit, launchAddress, VIEWPORT, watchSession } from '../support/window.ts';

/** Each test starts the agent twice and opens Chromium pages on both runs: 30-60 s on the loaded two cores. */
const BUDGET = 120_000;

/**
 * The window when its agent stops and comes back (issues 25 and 49): a real `flowsync ui` killed with a real signal
 * and started again in the same HOME, the window open in Chromium all along. Each run serves the window at an
 * address of its own, so a tab of the last run does not reconnect: it says how to open the new one.
 */
const IMAGES = pictures('agent-stopped');
const STOPPED = 'flowsync agent stopped';
const REOPEN = 'flowsync ui --open opens its window';

let browser: Browser;
let user: AgentOnService;
let agent: AgentProcess;
let origin: string;
let context: BrowserContext;
let page: Page;
let heldSession: () => string;

beforeAll(async () => {
  buildRenderer();
  browser = await launchChromium();
}, 120_000);
afterAll(async () => {
  await browser?.close();
  IMAGES.cleanup();
});

/** Starts `flowsync ui` (with `args`) and opens its window in a new page of a new browser context. */
async function openFirstWindow(args: string[] = []): Promise<void> {
  agent = user.run(['ui', ...args]);
  const address = await launchAddress(agent, user.env);
  origin = new URL(address).origin;
  context = await browser.newContext({ viewport: VIEWPORT, colorScheme: 'light' });
  page = await context.newPage();
  heldSession = watchSession(page);
  await page.goto(address);
  await expect.poll(() => counts(page), { timeout: 20_000 }).toContain('1 flow · 1 file · 0 pending');
}

beforeEach(async () => {
  user = await agentOnService({ 'flows/hello/main.yaml': 'hello\n' });
  initGit(user.repo);
  writeAgentConfig(user.env, [{ path: user.repo.root }]);
}, 60_000);
afterEach(async () => {
  await context?.close();
  await user?.close();
});

const counts = (on: Page) =>
  on
    .getByTestId('counts')
    .textContent({ timeout: 1000 })
    .catch(() => '');
const alerts = async (on: Page) => (await on.getByRole('alert').allTextContents()).join('\n');

/** Whether the window's controls are out of reach: the app is inert, a click on a tab does nothing, Tab skips it. */
async function controlsOff(on: Page): Promise<boolean> {
  const box = (await on.locator('#tab-settings').boundingBox())!;
  await on.mouse.click(box.x + box.width / 2, box.y + box.height / 2);
  await on.keyboard.press('Tab');
  return (await on.evaluate(`(() => {
    const app = document.querySelector('.app');
    return app.inert
      && document.querySelector('#tab-settings').getAttribute('aria-selected') === 'false'
      && !app.contains(document.activeElement);
  })()`)) as boolean;
}

/**
 * Stops the agent with `signal` and waits for the window to say so. How soon is a number for a benchmark, not an
 * assertion here (README: 0.1 s measured; a loaded CI machine must not fail a correct window).
 */
async function stopAgent(signal: NodeJS.Signals): Promise<void> {
  agent.signal(signal);
  await expect.poll(() => alerts(page), { interval: 50 }).toContain(STOPPED);
  await agent.exited;
}

/** Starts the agent again in the same HOME (with `args`); resolves with its `Window:` line's origin. */
async function startAgain(args: string[] = []): Promise<string> {
  agent = user.run(['ui', ...args]);
  await agent.waitFor(/Window: http\S+/);
  return new URL(/Window: (http\S+)/.exec(agent.output())![1]!).origin;
}

describe('the window whose agent stops', () => {
  for (const signal of ['SIGKILL', 'SIGINT'] as const) {
    it(
      `says so after a ${signal}, with its controls off, and how to open the next run's window, which is elsewhere`,
      async () => {
        await openFirstWindow();
        await stopAgent(signal);
        expect(await controlsOff(page)).toBe(true);
        expect(await alerts(page)).toContain(REOPEN);
        if (signal === 'SIGKILL') {
          await IMAGES.take(page, 'agent-stopped');
          expect(await seriousViolations(page)).toEqual([]);
        }

        // Changed while the agent was gone: the next run's window shows it, at an address of its own.
        user.repo.write('flows/added/flow.yaml', 'added\n');
        const next = await startAgain();
        expect(next).not.toBe(origin);
        expect(new URL(next).hostname).toMatch(/^[a-z0-9]+\.localhost$/);
        const opened = await context.newPage();
        await opened.goto(await launchAddress(agent, user.env));
        await expect
          .poll(() => counts(opened), { timeout: 20_000 })
          .toContain('2 flows · 2 files · 0 pending');
        user.repo.write('flows/later/flow.yaml', 'later\n');
        await expect
          .poll(() => counts(opened), { timeout: 10_000 })
          .toContain('3 flows · 3 files · 0 pending');
        // The tab of the last run still says so, its controls still off: it reached nothing of the new agent.
        expect(await alerts(page)).toContain(STOPPED);
        expect(await controlsOff(page)).toBe(true);
      },
      BUDGET,
    );
  }

  it(
    'keeps its session in memory and a tab credential for a reload; neither opens anything after a restart',
    async () => {
      await openFirstWindow();
      const session = heldSession();
      expect(session).toMatch(/^[\w-]{20,}$/);
      // The session is in the page's memory only; its tab keeps a credential of this run for a reload.
      expect(await page.evaluate('JSON.stringify(localStorage)')).toBe('{}');
      const oldTab = (await page.evaluate("sessionStorage.getItem('flowsync.tab')")) as string;
      expect(oldTab).toMatch(/^[\w-]{20,}$/);
      await page.reload();
      await expect.poll(() => counts(page), { timeout: 20_000 }).toContain('1 flow');
      // A new tab of the same browser, on the address without any token, as a bookmark opens it: ui --open is needed.
      const bookmark = await context.newPage();
      await bookmark.goto(`${origin}/`);
      await expect.poll(() => alerts(bookmark), { timeout: 10_000 }).toContain('flowsync ui --open');
      await bookmark.close();

      await stopAgent('SIGKILL');
      // Nothing of the window is kept on disk for the next run.
      expect(readdirSync(user.dataDir)).not.toContain('window.json');
      const next = await startAgain();
      expect(next).not.toBe(origin);
      // The last run's session and tab credential, and made-up ones, at the new address: each refused.
      for (const presented of [oldTab, session, 'not-a-tab-of-this-agent-0042']) {
        const other = await browser.newContext();
        await other.addInitScript(
          `if (!sessionStorage.getItem('flowsync.seeded')) { sessionStorage.setItem('flowsync.seeded', '1'); ` +
            `sessionStorage.setItem('flowsync.tab', ${JSON.stringify(presented)}); }`,
        );
        const stranger = await other.newPage();
        await stranger.goto(`${next}/`);
        await expect.poll(() => alerts(stranger), { timeout: 10_000 }).toContain('session has ended');
        expect(await stranger.getByRole('tab', { name: 'Settings' }).count()).toBe(0);
        const status = await stranger.evaluate(
          `fetch('/api/status', { method: 'POST', headers: { 'content-type': 'application/json',
           authorization: 'Bearer ${presented}' }, body: '{}' }).then((r) => r.status)`,
        );
        expect(status).toBe(401);
        await other.close();
      }
      expect(await alerts(page)).toContain(STOPPED);
    },
    BUDGET,
  );

  it(
    'says its session has ended, and stops asking, when the next run serves its port under another name',
    async () => {
      await openFirstWindow();
      const port = new URL(origin).port;
      await stopAgent('SIGINT');
      // The port the user chose (--ui-port): the same in the next run, and the old name refused there.
      const next = await startAgain(['--ui-port', port]);
      expect(new URL(next).port).toBe(port);
      expect(next).not.toBe(origin);
      await expect.poll(() => alerts(page), { timeout: 10_000 }).toContain("This window's session has ended");
      expect(await alerts(page)).toContain('flowsync ui --open');
      expect(await controlsOff(page)).toBe(true);
    },
    BUDGET,
  );

  it(
    'sends its session to nothing else that takes the port meanwhile',
    async () => {
      await openFirstWindow();
      const session = heldSession();
      expect(session).toMatch(/^[\w-]{20,}$/);
      await stopAgent('SIGKILL');
      // Another program takes the window's port while the agent is gone, and keeps what the window sends it.
      const seen: string[] = [];
      const squatter = await listen(Number(new URL(origin).port), async (request) => {
        seen.push(
          `${request.method} ${request.url} ${JSON.stringify(request.headers)} ${await body(request)}`,
        );
      });
      try {
        await expect.poll(() => seen.length, { timeout: 10_000 }).toBeGreaterThanOrEqual(2);
        expect(await alerts(page)).toContain(STOPPED);
        const next = await startAgain();
        expect(next).not.toBe(origin);
        // The old address's session opens nothing at the new one.
        const status = await request(`${next}/api/status`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', authorization: `Bearer ${session}`, origin: next },
          body: '{}',
        });
        expect(status.statusCode).toBe(401);
        await status.body.dump();
        expect(seen.some((line) => line.startsWith('POST /api/hello'))).toBe(true);
        expect(seen.join('\n')).not.toContain(session);
        expect(await alerts(page)).toContain(STOPPED);
      } finally {
        await new Promise((resolve) => squatter.close(resolve));
      }
    },
    BUDGET,
  );
});

/**
 * Another user's program on the window's port while the agent is stopped: it serves a page that takes whatever this
 * origin stored and keeps trying it, from the user's own browser, once the agent is back; then it leaves the port.
 */
const SQUATTER = `
const [port, root] = [Number(process.argv[1]), process.argv[2]];
const page = \`<!doctype html><title>not flowsync</title><script>
const ROOT = \${JSON.stringify(root)};
const found = [];
for (const store of [localStorage, sessionStorage])
  for (let i = 0; i < store.length; i++) found.push(store.getItem(store.key(i)));
window.found = found;
window.attempts = [];
const post = async (path, headers, body) => {
  try {
    const response = await fetch(path, { method: 'POST', headers: { 'content-type': 'application/json', ...headers },
      body: JSON.stringify(body) });
    attempts.push(path + ' ' + response.status + ' ' + (await response.text()).slice(0, 300));
  } catch { attempts.push(path + ' unreachable'); }
};
const round = async () => {
  for (const secret of found) {
    await post('/api/pauseRepository', { authorization: 'Bearer ' + secret }, { root: ROOT });
    await post('/api/session', {}, { tab: secret });
    await post('/api/session', {}, { session: secret });
    await post('/api/session', {}, { launch: secret });
  }
  setTimeout(round, 200);
};
round();
</script>\`;
const server = require('node:http').createServer((request, response) => {
  if (request.url !== '/') return response.writeHead(404).end();
  response.writeHead(200, { 'content-type': 'text/html' }).end(page);
  // Served: the port is left for the agent to take back (an exit, not close(), which would wait for the page's
  // kept-alive connection).
  setTimeout(() => process.exit(0), 500);
});
server.listen(port, '127.0.0.1', () => console.log('listening'));
`;

describe("another user's page on the window's port while the agent is stopped", () => {
  let attacker: UnixUser | undefined;
  afterEach(async () => {
    await attacker?.remove();
    attacker = undefined;
  }, BUDGET);

  it(
    'gets no session and no action once the agent is back on that port, though the open tab reloaded into it',
    async () => {
      attacker = createUnixUser();
      await openFirstWindow();
      await stopAgent('SIGKILL');
      const squatter = attacker.start(process.execPath, [
        '-e',
        SQUATTER,
        new URL(origin).port,
        user.repo.root,
      ]);
      let said = '';
      squatter.stdout!.on('data', (chunk: Buffer) => (said += chunk.toString()));
      squatter.stderr!.on('data', (chunk: Buffer) => (said += chunk.toString()));
      await expect.poll(() => said, { timeout: 20_000 }).toContain('listening');
      // The user reloads the tab that says the agent stopped: it loads the other user's page.
      await page.reload();
      expect(await page.title()).toBe('not flowsync');
      const found = (await page.evaluate('window.found')) as string[];
      expect(found.length).toBeGreaterThan(0);
      await new Promise((exited) =>
        squatter.exitCode !== null ? exited(null) : squatter.once('exit', exited),
      );

      // The agent back on the same port (the user's --ui-port): the other user's page, still open, reaches it.
      expect(new URL(await startAgain(['--ui-port', new URL(origin).port])).port).toBe(new URL(origin).port);
      const attempts = async () => (await page.evaluate('window.attempts')) as string[];
      // The agent answers the page's tries (each credential, each route) several times over.
      await expect
        .poll(
          async () =>
            (await attempts()).filter((line) => /^\/api\/pauseRepository (401|403|200)/.test(line)).length,
          {
            timeout: 30_000,
          },
        )
        .toBeGreaterThanOrEqual(3);
      const answered = (await attempts()).filter((line) => !/ (404|unreachable)/.test(line));
      expect(answered.filter((line) => / 200 /.test(line))).toEqual([]);
      // Nothing done: the repository is not paused (a pause is kept in the config file).
      const config = readFileSync(join(user.env.XDG_CONFIG_HOME!, 'flowsync', 'config.json'), 'utf8');
      expect(config).not.toContain('pausedAt');
    },
    BUDGET,
  );
});

/**
 * A plain HTTP server on 127.0.0.1:`port` that answers everything with 404 after `record` (the browser tries ::1
 * first, where nothing listens now, then 127.0.0.1).
 */
function listen(port: number, record: (request: IncomingMessage) => Promise<void>): Promise<Server> {
  const server = createServer((request, response) => {
    void record(request).then(() => response.writeHead(404).end('not here'));
  });
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, '127.0.0.1', () => resolve(server));
  });
}

async function body(request: IncomingMessage): Promise<string> {
  let text = '';
  for await (const chunk of request) text += String(chunk);
  return text;
}
