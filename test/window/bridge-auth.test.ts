import { mkdtempSync, rmSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Agent, agentConfigSchema } from '../../src/agent/index.ts';
import { createAgentApi, startBridge, statusEvents, type Bridge } from '../../src/window/index.ts';
import { createSecretStore } from '../../src/secrets/index.ts';
import { startTestService, type TestService } from '../support/service.ts';
import { almostToken } from '../support/tokens.ts';
import { createUnixUser } from '../support/unix-user.ts';
import { windowSession } from '../support/window.ts';

let svc: TestService;
let dir: string;
let agent: Agent;
let bridge: Bridge;
let token: string;

beforeAll(async () => {
  svc = await startTestService();
  dir = mkdtempSync(join(tmpdir(), 'flowsync-bridge-auth-'));
  agent = await Agent.open({
    config: agentConfigSchema.parse({ serviceUrl: svc.url }),
    statePath: join(dir, 'state.db'),
    secrets: createSecretStore({ FLOWSYNC_TOKEN: svc.tokens.user }),
  });
  const api = createAgentApi(agent);
  bridge = await startBridge({ api, subscribe: statusEvents(agent, api) });
  // A window's session: what a page presents (the agent token is the agent's own; see bridge.test.ts).
  token = await windowSession(bridge);
});
afterAll(async () => {
  await bridge?.close();
  await agent?.close();
  await svc?.close();
  rmSync(dir, { recursive: true, force: true });
});

/**
 * One request with the path exactly as written: node:http sends it byte for byte, so nothing on the way
 * normalizes it the way a URL class or fetch would. Only the status is read (an event stream never ends).
 */
function raw(method: 'GET' | 'POST', path: string, headers: Record<string, string> = {}): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      {
        host: '127.0.0.1',
        port: bridge.port,
        method,
        path,
        // The window's own name: the bridge answers no other Host.
        headers: { host: new URL(bridge.address).host, 'content-type': 'application/json', ...headers },
      },
      (response) => {
        resolve(response.statusCode ?? 0);
        response.destroy();
      },
    );
    req.on('error', reject);
    req.end(method === 'POST' ? '{}' : undefined);
  });
}

// Each spelling a router, a proxy or a browser might turn into /api/status (or /api/events) after a check on the
// raw URL has let it through.
const STATUS_SPELLINGS = [
  '/api/status',
  '/%61pi/status',
  '/%41pi/status',
  '/api/%73tatus',
  '/%61%70%69/%73%74%61%74%75%73',
  '//api/status',
  '/api//status',
  '/./api/status',
  '/api/./status',
  '/x/../api/status',
  '/api/x/../status',
  '/api/status/',
  '/api/status%00',
  '/api/status%2f',
  '/%2561pi/status',
  '/api/%2573tatus',
  '/API/status',
  '/Api/Status',
  '/api/%2e%2e/api/status',
  '/api/%2E%2E/api/status',
  '/%2e/api/status',
  '/api;/status',
  '/api/status;x',
  '/api/status#x',
  '/api\\status',
  '/%5capi/status',
];
const EVENTS_SPELLINGS = [
  '/api/events',
  '/%61pi/events',
  '/api/%65vents',
  '//api/events',
  '/./api/events',
  '/x/../api/events',
  '/api/events/',
  '/%2561pi/events',
  '/API/events',
  '/api/events?token=',
  '/api/events?token=wrong',
];

describe('the bridge token, whatever the spelling of the path', () => {
  it.each(STATUS_SPELLINGS)('POST %s without the token is not answered with 2xx', async (path) => {
    const status = await raw('POST', path);
    expect(status < 200 || status > 299, `answered ${status}`).toBe(true);
  });

  it.each([...STATUS_SPELLINGS, ...EVENTS_SPELLINGS])(
    'GET %s without the token is not answered with 2xx',
    async (path) => {
      const status = await raw('GET', path);
      expect(status < 200 || status > 299, `answered ${status}`).toBe(true);
    },
  );

  it('answers the same calls with the token in the Authorization header (so the table above can fail)', async () => {
    expect(await raw('POST', '/api/status', { authorization: `Bearer ${token}` })).toBe(200);
    expect(await raw('GET', '/api/events', { authorization: `Bearer ${token}` })).toBe(200);
  });

  it('takes the token in the query only for the event stream, which EventSource opens', async () => {
    expect(await raw('GET', `/api/events?token=${token}`)).toBe(200);
    expect(await raw('POST', `/api/status?token=${token}`)).toBe(401);
    expect(await raw('POST', `/%61pi/status?token=${token}`)).toBe(401);
  });

  it('refuses the old x-flowsync-token header, another scheme, and a wrong token', async () => {
    expect(await raw('POST', '/api/status', { 'x-flowsync-token': token })).toBe(401);
    expect(await raw('POST', '/api/status', { authorization: `Basic ${token}` })).toBe(401);
    expect(await raw('POST', '/api/status', { authorization: `Bearer ${almostToken(token)}` })).toBe(401);
    expect(await raw('POST', '/api/status', { authorization: `Bearer ${token}x` })).toBe(401);
    expect(await raw('POST', '/api/status', { authorization: 'Bearer' })).toBe(401);
  });
});

describe('another local user with a valid session', () => {
  it('is refused: the session opens nothing from another user', async () => {
    // The session a page of another user's program could have read (README, Security model), handed to that user.
    const stranger = createUnixUser();
    try {
      const call = `
        const request = require('node:http').request(
          { host: '127.0.0.1', port: ${bridge.port}, method: 'POST', path: '/api/status',
            headers: { host: '${new URL(bridge.address).host}', 'content-type': 'application/json',
              authorization: 'Bearer ${token}' } },
          (response) => { console.log('answered ' + response.statusCode); response.resume(); },
        );
        request.on('error', (error) => console.log('refused ' + error.code));
        request.end('{}');`;
      // Started, not run: the bridge answers from this process, which must not be blocked while it waits.
      const child = stranger.start(process.execPath, ['-e', call]);
      let heard = '';
      child.stdout!.on('data', (chunk: Buffer) => (heard += chunk.toString()));
      await new Promise((exited) => child.once('exit', exited));
      expect(heard.trim()).toBe('answered 403');
      // The same session from this user still works.
      expect(await raw('POST', '/api/status', { authorization: `Bearer ${token}` })).toBe(200);
    } finally {
      await stranger.remove();
    }
  });
});
