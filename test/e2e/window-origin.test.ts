import { chmodSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { buildRenderer, launchChromium } from '../support/browser.ts';
import { runFlowsync } from '../support/cli.ts';
import {
  agentOnService,
  writeAgentConfig,
  type AgentOnService,
  type AgentProcess,
} from '../support/agent-process.ts';
import { createUnixUser, type UnixUser } from '../support/unix-user.ts';
import { initGit, launchAddress, VIEWPORT } from '../support/window.ts';

/**
 * Another real user of the machine serves the window's old address while the agent is stopped, and the user's
 * browser loads it (a reload of the tab left open). What that page leaves for its origin must not apply to the
 * window the next `flowsync ui --open` opens: a service worker, a cached `/`, a cached `/assets/index-<hash>.js`, or
 * kept-alive connections. Each way, the other user's script, once it runs with the launch address of the next run
 * (or sees the session a page of it trades), reads the agent's status and pauses every repository.
 */

/** What the other user's script does with a session: reads the status, pauses every repository it names. */
const OWN = `
async function own(session) {
  const call = (method, body) => fetch('/api/' + method, { method: 'POST',
    headers: { 'content-type': 'application/json', authorization: 'Bearer ' + session },
    body: JSON.stringify(body) }).then((response) => response.json());
  const status = await call('status', {});
  const roots = status.value.repositories.map((repository) => repository.root);
  for (const root of roots) await call('pauseRepository', { root });
  return roots;
}`;

/** The script of a page the other user's code is: with a launch address, it trades it and acts. */
const IN_PAGE = `${OWN}
window.attacker = 'ran';
(async () => {
  const launch = new URLSearchParams(location.hash.slice(1)).get('token');
  if (!launch) return fetch('/primed');
  // Whatever answers /api/session first may be one of the other user's kept connections: tried until the agent does.
  for (let i = 0; i < 50; i++) {
    try {
      const reply = await fetch('/api/session', { method: 'POST', headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ launch }) }).then((response) => response.json());
      if (reply.ok) {
        window.attacker = 'paused ' + (await own(reply.value.session)).join(' ');
        return;
      }
      window.attacker = 'refused: ' + reply.error.message;
    } catch {}
    await new Promise((wait) => setTimeout(wait, 200));
  }
})();`;

/** A worker that lets everything through, and keeps the session a page of its origin trades. */
const WORKER = `${OWN}
self.addEventListener('install', () => self.skipWaiting());
self.addEventListener('activate', (event) => event.waitUntil(self.clients.claim()));
self.addEventListener('fetch', (event) => {
  if (new URL(event.request.url).pathname !== '/api/session') return;
  event.respondWith(fetch(event.request).then((response) => {
    response.clone().json().then((reply) => reply.ok && own(reply.value.session));
    return response;
  }));
});`;

/**
 * The other user's server on the window's old port, in one of the four ways; it says `listening`, then `primed` once
 * the user's browser has kept what it left, and leaves the port (kept-alive: it stops listening but keeps the
 * connections, and answers on them whatever comes next).
 */
const SQUATTER = `
const [way, port, asset] = [process.argv[1], Number(process.argv[2]), process.argv[3]];
const http = require('node:http');
const IN_PAGE = ${JSON.stringify(IN_PAGE)};
const WORKER = ${JSON.stringify(WORKER)};
const html = (body) => '<!doctype html><meta charset="utf-8"><title>not flowsync</title>' + body;
const page = html('<script>' + IN_PAGE + '</script>');
const YEAR = 'public, max-age=31536000, immutable';
let released = false;
const warming = [];
const server = http.createServer((request, response) => {
  const send = (status, type, body, headers = {}) =>
    response.writeHead(status, { 'content-type': type, ...headers }).end(body);
  if (released) {
    // On a kept connection, after the port was left: the next window's page, then nothing.
    if (request.url === '/') return send(200, 'text/html', page, { connection: 'close' });
    return send(503, 'text/plain', 'not here', { connection: 'close' });
  }
  if (request.url === '/primed') {
    send(200, 'text/plain', 'ok');
    console.log('primed');
    if (way === 'kept-alive') {
      released = true;
      server.close();
      return console.log('released');
    }
    return setTimeout(() => process.exit(0), 200);
  }
  if (way === 'worker') {
    if (request.url === '/sw.js') return send(200, 'text/javascript', WORKER);
    return send(200, 'text/html', html('<script>navigator.serviceWorker.register("/sw.js")' +
      '.then(() => navigator.serviceWorker.ready).then(() => fetch("/primed"));</script>'));
  }
  if (way === 'cached-page') return send(200, 'text/html', page, { 'cache-control': YEAR });
  if (way === 'cached-asset') {
    if (request.url === '/assets/' + asset) return send(200, 'text/javascript', IN_PAGE, { 'cache-control': YEAR });
    return send(200, 'text/html', html('<script type="module" crossorigin src="./assets/' + asset + '"></script>'),
      { 'cache-control': 'no-store' });
  }
  // kept-alive: six calls at once, so that the browser keeps six connections to this port.
  if (request.url.startsWith('/warm')) {
    warming.push(() => send(200, 'text/plain', 'warm'));
    if (warming.length === 6) warming.splice(0).forEach((answer) => answer());
    return;
  }
  return send(200, 'text/html', html('<script>Promise.all([0, 1, 2, 3, 4, 5].map((i) => fetch("/warm?" + i)))' +
    '.then(() => fetch("/primed"));</script>'));
});
server.keepAliveTimeout = 600000;
server.listen(port, '127.0.0.1', () => console.log('listening'));
`;

const WAYS = ['worker', 'cached-page', 'cached-asset', 'kept-alive'] as const;

let browser: Browser;
let attacker: UnixUser;
let user: AgentOnService | undefined;
let context: BrowserContext | undefined;

beforeAll(async () => {
  buildRenderer();
  browser = await launchChromium();
  attacker = createUnixUser();
}, 120_000);
afterAll(async () => {
  await browser?.close();
  await attacker?.remove();
});
afterEach(async () => {
  await context?.close();
  await user?.close();
});

const counts = (on: Page) =>
  on
    .getByTestId('counts')
    .textContent({ timeout: 1000 })
    .catch(() => '');
const configText = () => readFileSync(join(user!.env.XDG_CONFIG_HOME!, 'flowsync', 'config.json'), 'utf8');

/** The hashed name of the window's script in this build, as anyone can read it from the package. */
function windowScript(): string {
  const index = readFileSync(new URL('../../renderer/dist/index.html', import.meta.url), 'utf8');
  return /assets\/(index-[\w-]+\.js)/.exec(index)![1]!;
}

/** `flowsync ui --open`, with a $BROWSER that writes down the address it is given. */
async function openWithBrowser(env: NodeJS.ProcessEnv, dir: string): Promise<string> {
  const opened = join(dir, `opened-${Date.now()}.txt`);
  const opener = join(dir, `browser-${Date.now()}.sh`);
  writeFileSync(opener, `#!/bin/sh\nprintf '%s\\n' "$1" > '${opened}'\n`);
  chmodSync(opener, 0o755);
  const run = await runFlowsync(['ui', '--open'], { env: { ...env, BROWSER: opener } });
  expect(run.code, run.stderr).toBe(0);
  await expect.poll(() => readFileSync(opened, 'utf8').trim(), { timeout: 10_000 }).toMatch(/#token=/);
  return readFileSync(opened, 'utf8').trim();
}

describe("another user serving the window's old address while the agent is stopped", () => {
  for (const way of WAYS) {
    it(`leaves nothing the next window uses: ${way}`, async () => {
      user = await agentOnService({ 'flows/hello/main.yaml': 'hello\n' });
      initGit(user.repo);
      writeAgentConfig(user.env, [{ path: user.repo.root }]);
      let agent: AgentProcess = user.run(['ui']);
      const first = await launchAddress(agent, user.env);
      context = await browser.newContext({ viewport: VIEWPORT, colorScheme: 'light' });
      const tab = await context.newPage();
      await tab.goto(first);
      await expect.poll(() => counts(tab), { timeout: 20_000 }).toContain('1 flow');
      const oldOrigin = new URL(first).origin;

      agent.signal('SIGINT');
      await agent.exited;
      const squatter = attacker.start(process.execPath, [
        '-e',
        SQUATTER,
        way,
        new URL(first).port,
        windowScript(),
      ]);
      let said = '';
      squatter.stdout!.on('data', (chunk: Buffer) => (said += chunk.toString()));
      squatter.stderr!.on('data', (chunk: Buffer) => (said += chunk.toString()));
      await expect.poll(() => said, { timeout: 20_000 }).toContain('listening');
      // The user reloads the tab that says the agent stopped: it loads the other user's page, which primes its way.
      await tab.reload();
      await expect.poll(() => said, { timeout: 20_000 }).toContain('primed');
      if (way === 'kept-alive') await expect.poll(() => said).toContain('released');
      else
        await new Promise((exited) =>
          squatter.exitCode !== null ? exited(null) : squatter.once('exit', exited),
        );

      // The agent again, and a new window of it, as the user opens one: in a new tab of the same browser.
      agent = user.run(['ui']);
      await agent.waitFor(/Window: http/);
      const next = await openWithBrowser(user.env, user.repo.dir);
      const reopened = await context.newPage();
      await reopened.goto(next);
      // Either the window shows, or the other user's script ran (or its worker holds the page).
      const seen = () =>
        (
          reopened.evaluate(
            `({ attacker: window.attacker ?? null, worker: !!navigator.serviceWorker?.controller,
                title: document.title })`,
          ) as Promise<{ attacker: string | null; worker: boolean; title: string }>
        ).catch(() => ({ attacker: 'unreadable', worker: false, title: '' }));
      await expect
        .poll(
          async () => {
            const now = await seen();
            return (
              now.attacker !== null || now.worker || (await counts(reopened))?.includes('1 flow') === true
            );
          },
          { timeout: 20_000 },
        )
        .toBe(true);
      const found = await seen();
      // What the other user's script got done, when it ran: the repository paused (a pause is kept in the config).
      if (found.attacker !== null || found.worker)
        await expect
          .poll(() => configText().includes('pausedAt'), { timeout: 10_000 })
          .toBe(true)
          .catch(() => {});
      expect({ ...found, paused: configText().includes('pausedAt'), origin: new URL(next).origin }).toEqual({
        attacker: null,
        worker: false,
        title: 'flowsync',
        paused: false,
        origin: expect.not.stringMatching(`^${oldOrigin}$`),
      });
      expect(await counts(reopened)).toContain('1 flow');
      expect(context.serviceWorkers().map((worker) => new URL(worker.url()).origin)).not.toContain(
        new URL(next).origin,
      );
    }, 120_000);
  }
});
