import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createServer, type AddressInfo, type Server } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { userEnv } from '../support/agent-process.ts';
import { runFlowsync } from '../support/cli.ts';

/**
 * A user's mistakes, typed as a user types them: each must end in one line that says what to do, no stack trace,
 * and the exit code the README documents (0 ok, 1 the service refused, 2 usage, 3 the service unreachable).
 */
let dir: string;
let env: NodeJS.ProcessEnv;
/** A port another program holds (as another `flowsync serve` would). */
let taken: Server;
beforeAll(async () => {
  taken = createServer();
  await new Promise<void>((ready) => taken.listen(0, '127.0.0.1', ready));
  dir = mkdtempSync(join(tmpdir(), 'flowsync-bad-input-'));
  const home = join(dir, 'home');
  writeFileSync(join(dir, 'a-file.txt'), 'not a folder\n');
  // A repository's folder beside the home (`dir` holds the home, and is refused as no repository).
  mkdirSync(join(dir, 'app'));
  writeFileSync(join(dir, 'bad.json'), '{"args": ');
  // No service runs on port 9: an address nothing answers.
  env = {
    ...userEnv(home),
    FLOWSYNC_URL: '',
    FLOWSYNC_TOKEN: 'fsu_not_a_real_token_0000',
    FLOWSYNC_ADMIN_TOKEN: '',
    FLOWSYNC_API_KEY: '',
  };
});
afterAll(async () => {
  rmSync(dir, { recursive: true, force: true });
  await new Promise((done) => taken.close(done));
});
const takenPort = () => String((taken.address() as AddressInfo).port);

const missing = () => join(dir, 'no-such-folder');
const app = () => join(dir, 'app');
const file = () => join(dir, 'a-file.txt');
const unreachable = 'http://127.0.0.1:9';
const sixteen = Buffer.alloc(16).toString('base64');
const DECRYPT_ARGS = JSON.stringify({
  ciphertext: '',
  iv: Buffer.alloc(12).toString('base64'),
  key: sixteen,
  tag: sixteen,
});

const cases: { name: string; args: () => string[]; code: number; says: RegExp }[] = [
  { name: 'sync of a missing folder', args: () => ['sync', missing()], code: 2, says: /does not exist/ },
  { name: 'sync of a file', args: () => ['sync', file()], code: 2, says: /is not a folder/ },
  { name: 'start of a missing folder', args: () => ['start', missing()], code: 2, says: /does not exist/ },
  { name: 'start of a file', args: () => ['start', file()], code: 2, says: /is not a folder/ },
  {
    name: 'sync with a URL that is not one',
    args: () => ['sync', app(), '--url', 'not-a-url'],
    code: 2,
    says: /not a service URL/,
  },
  {
    name: 'start with a URL that is not one',
    args: () => ['start', app(), '--url', 'ftp://example.com'],
    code: 2,
    says: /not a service URL/,
  },
  {
    name: 'login with a URL that is not one',
    args: () => ['login', '--url', 'not a url'],
    code: 2,
    says: /not a service URL/,
  },
  {
    name: 'call with arguments that are not JSON',
    args: () => ['call', 'svc/repo_config/public/update', '--args', '{nope', '--url', unreachable],
    code: 2,
    says: /JSON/,
  },
  {
    name: 'call with an arguments file that is not JSON',
    args: () => ['call', 'svc/repo_config/public/update', '--args-file', join(dir, 'bad.json')],
    code: 2,
    says: /JSON/,
  },
  {
    name: 'call with a missing arguments file',
    args: () => ['call', 'svc/repo_config/public/update', '--args-file', join(dir, 'none.json')],
    code: 2,
    says: /none\.json/,
  },
  {
    name: 'call of a function that does not exist',
    args: () => ['call', 'svc/nothing/here', '--url', unreachable],
    code: 2,
    says: /function/i,
  },
  {
    name: 'call of an unreachable service',
    args: () => ['call', 'crypto/decrypt_aes_gcm/run', '--args', DECRYPT_ARGS, '--url', unreachable],
    code: 3,
    says: /127\.0\.0\.1:9/,
  },
  { name: 'an unknown option', args: () => ['status', '--bogus'], code: 2, says: /unknown option/ },
  { name: 'an unknown command', args: () => ['stat'], code: 2, says: /unknown command/ },
  {
    name: 'a port that is not one',
    args: () => ['serve', '--port', 'abc'],
    code: 2,
    says: /port/,
  },
  {
    // Was "something went wrong (incident …) … Please report it": a bug report for a busy port.
    name: 'serve on a port another program holds',
    args: () => ['serve', '--port', takenPort(), '--db', join(dir, 'service.db')],
    code: 2,
    says: /^flowsync: 127\.0\.0\.1:\d+ is in use by another program .*choose another port/,
  },
  {
    name: 'serve with a log level that is not one',
    args: () => ['serve', '--port', '0', '--db', join(dir, 'service.db'), '--log-level', 'verbose'],
    code: 2,
    says: /'verbose' is invalid\. Allowed choices are fatal, error, warn, info, debug, silent/,
  },
  {
    name: 'a window port out of range',
    args: () => ['start', app(), '--ui-port', '70000'],
    code: 2,
    says: /port/,
  },
];

describe('flowsync with a user\u2019s mistakes', () => {
  it.each(cases)('$name: one line, no stack, exit $code', async ({ args, code, says }) => {
    const result = await runFlowsync(args(), { env, timeoutMs: 30_000 });
    const output = `${result.stdout}${result.stderr}`;
    expect(output, output).not.toMatch(/^\s+at /m);
    expect(output, output).not.toMatch(/Error:|node:internal|\.ts:\d+/);
    expect(result.stderr, output).toMatch(says);
    // One line of error; commander's hints after it ("(Did you mean start?)", "(run with --help …)") are fine.
    const lines = result.stderr.split('\n').filter((line) => line.trim() !== '' && !line.startsWith('('));
    expect(lines.length, output).toBe(1);
    expect(result.code, output).toBe(code);
  });
});
