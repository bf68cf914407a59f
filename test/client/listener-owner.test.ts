import { networkInterfaces } from 'node:os';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createClient } from '../../src/client/index.ts';
import { startTestService, type TestService } from '../support/service.ts';
import { createUnixUser, type UnixUser } from '../support/unix-user.ts';

/**
 * Another real user of this machine listens on a port, as a program of theirs would: whatever spelling of a local
 * address the user gives flowsync, no token goes there. And the reverse: their listener on the same port of another
 * address (`[::1]`) does not make flowsync refuse the user's own service on 127.0.0.1.
 */
const LISTENER = `
const server = require('node:http').createServer((request, response) => {
  console.log('heard ' + JSON.stringify(request.headers));
  request.resume();
  request.on('end', () => {
    response.writeHead(200, { 'content-type': 'application/json' });
    response.end(JSON.stringify({ status: 'success', value: { owner: 'a', name: 'b' } }));
  });
});
const [host, port] = [process.argv[1], Number(process.argv[2])];
server.listen({ host, port, ipv6Only: host === '::1' }, () => console.log('listening ' + server.address().port));
`;

let attacker: UnixUser;

/** Starts the attacker's listener; resolves with its port and what it heard so far. */
async function listen(host: string, port = 0): Promise<{ port: number; heard: () => string }> {
  const child = attacker.start(process.execPath, ['-e', LISTENER, host, String(port)]);
  let out = '';
  child.stdout!.on('data', (chunk: Buffer) => (out += chunk.toString()));
  child.stderr!.on('data', (chunk: Buffer) => (out += chunk.toString()));
  const listening = await new Promise<number>((resolve, reject) => {
    const look = () => {
      const found = /listening (\d+)/.exec(out);
      if (found) return resolve(Number(found[1]));
      if (child.exitCode !== null) return reject(new Error(`the listener exited: ${out}`));
      setTimeout(look, 50);
    };
    look();
  });
  return { port: listening, heard: () => out };
}

beforeAll(() => {
  attacker = createUnixUser();
});
afterAll(async () => {
  await attacker?.remove();
});

describe("another user's listener", () => {
  let port: number;
  let heard: () => string;
  beforeAll(async () => {
    // `::` takes IPv4 connections too (not v6only): every loopback spelling below reaches it.
    ({ port, heard } = await listen('::'));
  });

  // This machine's own non-loopback addresses reach it as well.
  const own = Object.values(networkInterfaces())
    .flat()
    .filter((info) => info && !info.internal && info.family === 'IPv4')
    .map((info) => info!.address);
  const spellings = [
    '127.0.0.1',
    '127.0.0.2',
    '127.1',
    '0.0.0.0',
    '0',
    'localhost',
    '[::1]',
    '[::ffff:127.0.0.1]',
    '[::ffff:7f00:1]',
    '[::]',
    ...own,
  ];

  it.each(spellings)('gets no token at http://%s:<port>', async (host) => {
    const client = createClient({
      baseUrl: `http://${host}:${port}`,
      auth: { userToken: 'fsu_a-token-for-my-own-service' },
      timeoutMs: 20_000,
      retry: { attempts: 1 },
    });
    const error = await client.repoConfig.update({ owner: 'a', name: 'b' }).catch((e: unknown) => e);
    await client.close();
    expect(heard()).not.toMatch(/authorization|fsu_/i);
    expect(heard()).not.toContain('heard');
    expect(String(error)).toContain(`run by another user (uid ${attacker.uid})`);
  });
});

describe("another user's listener on [::1], the same port as the user's own service on 127.0.0.1", () => {
  let svc: TestService;
  beforeAll(async () => {
    svc = await startTestService();
    await listen('::1', Number(new URL(svc.url).port));
  });
  afterAll(async () => {
    await svc?.close();
  });

  it('does not cut the user off from their own service', async () => {
    const client = createClient({
      baseUrl: svc.url,
      auth: { userToken: svc.tokens.user },
      timeoutMs: 20_000,
    });
    const value = await client.repoConfig.update({ owner: 'acme', name: 'app' });
    await client.close();
    expect(value).toMatchObject({ owner: 'acme', name: 'app' });
  });
});
