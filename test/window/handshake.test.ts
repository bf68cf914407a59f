import { fork, spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  connectToBridge,
  readyMessage,
  waitForAgentReady,
  type AgentStatus,
} from '../../src/window/index.ts';
import { FLOWSYNC_BIN, REGISTER_TSX } from '../support/cli.ts';
import { eventually, makeRepo, type TestRepo } from '../support/repo.ts';
import { startTestService, type TestService } from '../support/service.ts';
import { userEnv } from '../support/agent-process.ts';

let svc: TestService;
let repo: TestRepo;
let child: ChildProcess | undefined;
let stdout: string;

beforeEach(async () => {
  svc = await startTestService();
  repo = makeRepo();
  stdout = '';
});
afterEach(async () => {
  if (child && child.exitCode === null && child.signalCode === null) {
    const exited = new Promise((resolve) => child!.once('exit', resolve));
    child.kill('SIGTERM');
    await exited;
  }
  child = undefined;
  await svc.close();
  repo.cleanup();
});

/** `flowsync ui` as the desktop app starts it in development: a Node child with an IPC channel. */
function forkUi(...args: string[]): ChildProcess {
  const home = join(repo.dir, 'home');
  child = fork(FLOWSYNC_BIN, ['ui', ...args], {
    // Not vitest's own flags: the child is started as the app starts it.
    execArgv: [],
    env: {
      ...process.env,
      ...userEnv(home, svc),
    },
    stdio: ['ignore', 'pipe', 'pipe', 'ipc'],
  });
  child.stdout!.on('data', (chunk: Buffer) => (stdout += chunk.toString('utf8')));
  child.stderr!.resume();
  return child;
}

describe('the structured handshake of flowsync ui', () => {
  it('sends {type: ready, url, port, token} over IPC, and the bridge answers at that address with that token', async () => {
    const ready = await waitForAgentReady(forkUi());

    expect(ready).toEqual({
      type: 'ready',
      url: expect.stringMatching(/^http:\/\/[a-z0-9]+\.localhost:\d+\/#token=[\w-]+$/),
      port: expect.any(Number),
      token: expect.any(String),
    });
    expect(new URL(ready.url).port).toBe(String(ready.port));
    expect(new URL(ready.url).hash).toBe(`#token=${ready.token}`);
    // The address is this run's name under localhost, which the bridge client reaches on the loopback.
    const bridge = connectToBridge(ready.url);
    const status = (await bridge.call('status', {})) as AgentStatus;
    expect(status.repositories).toEqual([]);
    // The human line has the address only: the token in the handshake is the agent's, never printed.
    await eventually(() => expect(stdout).toContain(`Window: ${new URL(ready.url).origin}/ (`));
    expect(stdout).not.toContain(ready.token);
  });

  it('ends the wait with the exit code when the agent stops before it is ready', async () => {
    await expect(waitForAgentReady(forkUi('--ui-port', 'not-a-port'))).rejects.toThrow(
      'The agent (flowsync ui) exited with code 2 before its window was ready.',
    );
  });
});

describe('waitForAgentReady', () => {
  /** A real child that sends what `script` sends over its IPC channel, then exits. */
  const childSending = (script: string) =>
    spawn(process.execPath, ['-e', script], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });

  it('refuses a ready message that does not hold to the schema', async () => {
    const sender = childSending("process.send({ type: 'ready', url: 'http://attacker.example/', port: 80 })");
    await expect(waitForAgentReady(sender)).rejects.toThrow("The agent's ready message is malformed");
  });

  it('gets the message of a process that announces and exits at once, as one finding an agent running does', async () => {
    const desktop = new URL('../../src/window/index.ts', import.meta.url).href;
    const sender = spawn(
      process.execPath,
      [
        '--import',
        REGISTER_TSX,
        '-e',
        `const { announceReady } = await import('${desktop}');
         await announceReady('http://w1.localhost:8384/#token=abc');
         process.exit(0);`,
      ],
      { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] },
    );
    expect(await waitForAgentReady(sender)).toMatchObject({ port: 8384, token: 'abc' });
  });

  it('ends the wait when the agent cannot be started at all', async () => {
    const missing = spawn(join(repo.dir, 'no-such-node'), [], {
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    });
    await expect(waitForAgentReady(missing)).rejects.toThrow(
      /failed before its window was ready: spawn .*no-such-node ENOENT/,
    );
  });

  it('passes over other messages', async () => {
    const sender = childSending("process.send({ type: 'hello' }, () => process.exit(3))");
    await expect(waitForAgentReady(sender)).rejects.toThrow('exited with code 3 before its window was ready');
  });
});

describe('readyMessage', () => {
  it('takes the port and the token from the address the bridge gives', () => {
    expect(readyMessage('http://w1.localhost:8384/#token=abc_-1')).toEqual({
      type: 'ready',
      url: 'http://w1.localhost:8384/#token=abc_-1',
      port: 8384,
      token: 'abc_-1',
    });
  });

  it('refuses an address without a token, not http, or not a name under localhost', () => {
    expect(() => readyMessage('http://w1.localhost:8384/')).toThrow();
    expect(() => readyMessage('https://w1.localhost:8384/#token=abc')).toThrow();
    expect(() => readyMessage('http://example.com:8384/#token=abc')).toThrow();
    expect(() => readyMessage('http://localhost.example.com:8384/#token=abc')).toThrow();
    expect(() => readyMessage('http://127.0.0.1:8384/#token=abc')).toThrow();
  });
});
