import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startAgentProcess, userEnv, type AgentProcess } from '../support/agent-process.ts';
import { connectToBridge } from '../../src/window/index.ts';
import { runFlowsync } from '../support/cli.ts';
import { eventually } from '../support/repo.ts';
import { readDatabase } from '../support/service.ts';
import { createUnixUser, type UnixUser } from '../support/unix-user.ts';

/**
 * Another real user of the machine holds every connection slot of the embedded service's port (256), and holds them
 * again as soon as the service closes one: no token needed. The agent must stay in sync with its own service.
 */
const FLOOD = `
const port = Number(process.argv[1]);
let connected = 0;
const open = () => {
  const socket = require('node:net').connect(port, '127.0.0.1');
  socket.on('connect', () => connected++);
  socket.on('error', () => {});
  // A slot the service takes back is taken again.
  socket.on('close', () => setTimeout(open, 10));
};
for (let i = 0; i < Number(process.argv[2] ?? 400); i++) open();
setInterval(() => console.log('connected ' + connected), 200);
`;

/** Resolves once the flood has made at least `count` connections. */
async function flooding(said: () => string, count: number): Promise<void> {
  await eventually(() => {
    const counts = [...said().matchAll(/connected (\d+)/g)].map((found) => Number(found[1]));
    expect(Math.max(0, ...counts)).toBeGreaterThanOrEqual(count);
  }, 30_000);
}

let attacker: UnixUser;
let dir: string;
let agent: AgentProcess | undefined;

beforeAll(() => {
  attacker = createUnixUser();
  dir = mkdtempSync(join(tmpdir(), 'flowsync-flood-'));
});
afterAll(async () => {
  if (agent) {
    agent.signal('SIGINT');
    await agent.exitWithin();
  }
  await attacker?.remove();
  rmSync(dir, { recursive: true, force: true });
});

describe("another user holding every slot of the embedded service's port", () => {
  it('leaves the agent in sync with its own service, and flowsync call reaching it', async () => {
    const repo = join(dir, 'repo');
    mkdirSync(join(repo, 'flows/hello'), { recursive: true });
    writeFileSync(join(repo, 'flows/hello/main.yaml'), 'hello\n');
    const env = userEnv(join(dir, 'home'), 'embedded');
    agent = startAgentProcess(['start', repo], env);
    await agent.waitFor(/Watching 1 repository/, 60_000);
    const url = /syncing with (http:\/\/127\.0\.0\.1:\d+) \(the embedded service\)/.exec(agent.output())?.[1];
    expect(url).toBeDefined();
    const port = Number(new URL(url!).port);
    const stored = () =>
      readDatabase(join(dir, 'home/.local/share/flowsync/service.db'))<{ path: string }>(
        'SELECT path FROM flow_files ORDER BY path',
      ).map((row) => row.path);
    await eventually(() => expect(stored()).toEqual(['main.yaml']), 30_000);

    const flood = attacker.start(process.execPath, ['-e', FLOOD, String(port)]);
    let said = '';
    flood.stdout!.on('data', (chunk: Buffer) => (said += chunk.toString()));
    // Every slot of the port taken, and more waiting.
    await flooding(() => said, 300);

    // The agent's own kept-alive connection is closed by the service after 5 s idle (connection-limits.ts): from then
    // on it needs a new one, and the port has none to give.
    await new Promise((waited) => setTimeout(waited, 7000));
    mkdirSync(join(repo, 'flows/later'));
    writeFileSync(join(repo, 'flows/later/flow.yaml'), 'later\n');
    await eventually(() => expect(stored()).toEqual(['flow.yaml', 'main.yaml']), 30_000, 200);
    // `flowsync call` reaches the running agent's service the same way.
    const call = await runFlowsync(
      [
        'call',
        'svc/flow_def/action/sync_batch/run',
        '--args',
        '{"repo_owner":"acme","repo_name":"app","flows":[]}',
      ],
      { env },
    );
    expect(call.stderr).toBe('');
    expect(call.code).toBe(0);
    expect(agent.output()).not.toMatch(/incident|offline/i);
  }, 120_000);

  it("and of the window's port: the user's own calls still get through, the stranger's connections go first", async () => {
    const lock = JSON.parse(readFileSync(join(dir, 'home/.local/share/flowsync/agent.lock'), 'utf8')) as {
      bridge: string;
    };
    const port = Number(new URL(lock.bridge).port);
    const flood = attacker.start(process.execPath, ['-e', FLOOD, String(port)]);
    let said = '';
    flood.stdout!.on('data', (chunk: Buffer) => (said += chunk.toString()));
    await flooding(() => said, 300);
    // The window's own bridge client, as `flowsync status` and the desktop app use it.
    await eventually(
      async () => expect(await connectToBridge(lock.bridge).call('status', {})).toBeTruthy(),
      30_000,
      200,
    );
  }, 120_000);

  it("and 1,500 connections reopened to the window's port: every call of the user's CLI and window answers", async () => {
    const env = userEnv(join(dir, 'home'), 'embedded');
    const lock = JSON.parse(readFileSync(join(dir, 'home/.local/share/flowsync/agent.lock'), 'utf8')) as {
      bridge: string;
    };
    const window = new URL(lock.bridge);
    const flood = attacker.start(process.execPath, ['-e', FLOOD, window.port, '1500']);
    let said = '';
    flood.stdout!.on('data', (chunk: Buffer) => (said += chunk.toString()));
    await flooding(() => said, 3000);

    // The window's calls as a browser makes them: over the port, each on a connection of its own, never retried.
    const windowCall = () =>
      new Promise<number>((resolve, reject) => {
        const call = httpRequest(
          {
            host: '127.0.0.1',
            port: Number(window.port),
            path: '/api/status',
            method: 'POST',
            agent: false,
            headers: {
              host: window.host,
              authorization: `Bearer ${window.hash.replace('#token=', '')}`,
              'content-type': 'application/json',
            },
          },
          (response) => {
            response.resume();
            response.on('end', () => resolve(response.statusCode!));
          },
        );
        call.on('error', reject);
        call.end('{}');
      });
    const failed: string[] = [];
    for (let i = 0; i < 20; i++) {
      await windowCall().then(
        (status) => status !== 200 && failed.push(`window call ${i}: HTTP ${status}`),
        (error: Error) => failed.push(`window call ${i}: ${error.message}`),
      );
    }
    // The CLI as the user runs it, while the flood goes on.
    for (let i = 0; i < 4; i++) {
      const run = await runFlowsync(i % 2 ? ['conflicts', join(dir, 'repo')] : ['status'], {
        env,
        timeoutMs: 60_000,
      });
      if (run.code !== 0 || /incident/i.test(run.stdout + run.stderr))
        failed.push(`flowsync ${i % 2 ? 'conflicts' : 'status'}: exit ${run.code}: ${run.stderr}`);
    }
    expect(failed).toEqual([]);
    // The flood went on all along: its connections were opened again and again.
    await flooding(() => said, 6000);
  }, 240_000);
});
