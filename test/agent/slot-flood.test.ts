import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startAgentProcess, userEnv, type AgentProcess } from '../support/agent-process.ts';
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
let held = 0;
const open = () => {
  const socket = require('node:net').connect(port, '127.0.0.1');
  socket.on('connect', () => held++);
  socket.on('error', () => {});
  // A slot the service takes back is taken again.
  socket.on('close', (hadConnected) => { if (socket.connecting === false) held = Math.max(0, held - 1); setTimeout(open, 10); });
};
for (let i = 0; i < 400; i++) open();
setInterval(() => console.log('held ' + held), 500);
`;

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

/** Whether a connection to the port is closed before it can carry a request (the service holds its cap). */
function refused(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1');
    socket.setTimeout(3000, () => {
      socket.destroy();
      resolve(true);
    });
    socket.on('error', () => resolve(true));
    socket.on('close', () => resolve(true));
    // Still open a second after connecting: a slot was free.
    socket.on('connect', () =>
      setTimeout(() => {
        const open = !socket.destroyed;
        socket.destroy();
        resolve(!open);
      }, 1000),
    );
  });
}

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
    // The flood holds the port: a connection of this user's is closed as it comes.
    await eventually(async () => expect(await refused(port)).toBe(true), 30_000, 500);

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
    expect(said).toMatch(/held [1-9]/);
    expect(agent.output()).not.toMatch(/incident|offline/i);
  }, 120_000);
});
