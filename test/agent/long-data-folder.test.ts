import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startAgentProcess, userEnv, type AgentProcess } from '../support/agent-process.ts';
import { runFlowsync } from '../support/cli.ts';
import { eventually } from '../support/repo.ts';
import { readDatabase } from '../support/service.ts';
import { createUnixUser, type UnixUser } from '../support/unix-user.ts';

/**
 * A data folder whose path is too long for a Unix socket (108 bytes on Linux): the agent's sockets were silently not
 * made, and the agent reached its embedded service over the port another user can crowd. They go in a 0700 folder
 * of their own in $XDG_RUNTIME_DIR instead, and another user holding the service's port cuts nothing off.
 */
const FLOOD = `
const port = Number(process.argv[1]);
let connected = 0;
const open = () => {
  const socket = require('node:net').connect(port, '127.0.0.1');
  socket.on('connect', () => connected++);
  socket.on('error', () => {});
  socket.on('close', () => setTimeout(open, 10));
};
for (let i = 0; i < 400; i++) open();
setInterval(() => console.log('connected ' + connected), 200);
`;

let dir: string;
let runtime: string;
let attacker: UnixUser;
let agent: AgentProcess | undefined;

beforeAll(() => {
  attacker = createUnixUser();
  dir = mkdtempSync(join(tmpdir(), 'flowsync-long-'));
  runtime = mkdtempSync(join(tmpdir(), 'fs-run-'));
});
afterAll(async () => {
  if (agent) {
    agent.signal('SIGINT');
    await agent.exitWithin();
  }
  await attacker?.remove();
  rmSync(dir, { recursive: true, force: true });
  rmSync(runtime, { recursive: true, force: true });
});

describe('a data folder whose path is too long for a socket', () => {
  it("has the agent's and the service's sockets in a private folder of the run, which every command uses", async () => {
    const repo = join(dir, 'repo');
    mkdirSync(join(repo, 'flows/hello'), { recursive: true });
    writeFileSync(join(repo, 'flows/hello/main.yaml'), 'hello\n');
    const home = join(dir, 'home');
    const env = {
      ...userEnv(home, 'embedded'),
      XDG_DATA_HOME: join(dir, 'a-data-folder-as-deep-as-some-home-folders-are'.repeat(2)),
      XDG_RUNTIME_DIR: runtime,
    };
    const data = join(env.XDG_DATA_HOME, 'flowsync');
    expect(Buffer.byteLength(join(data, 'service.sock'))).toBeGreaterThan(108);
    agent = startAgentProcess(['start', repo], env);
    await agent.waitFor(/Watching 1 repository/, 60_000);
    expect(agent.output()).not.toContain('private socket');

    const lock = JSON.parse(readFileSync(join(data, 'agent.lock'), 'utf8')) as {
      socket: string;
      serviceSocket: string;
      service: string;
    };
    for (const socket of [lock.socket, lock.serviceSocket]) {
      expect(dirname(dirname(socket))).toBe(runtime);
      expect(statSync(socket).isSocket()).toBe(true);
      expect(statSync(socket).mode & 0o777).toBe(0o600);
      expect(statSync(dirname(socket)).mode & 0o777).toBe(0o700);
    }

    const stored = () =>
      readDatabase(join(data, 'service.db'))<{ path: string }>(
        'SELECT path FROM flow_files ORDER BY path',
      ).map((row) => row.path);
    await eventually(() => expect(stored()).toEqual(['main.yaml']), 30_000);
    // Another user holds every slot of the service's port, and takes each one back as soon as it is closed.
    const flood = attacker.start(process.execPath, ['-e', FLOOD, new URL(lock.service).port]);
    let said = '';
    flood.stdout!.on('data', (chunk: Buffer) => (said += chunk.toString()));
    await eventually(
      () => expect(Number(/connected (\d+)/.exec(said.split('\n').at(-2) ?? '')?.[1])).toBeGreaterThan(300),
      30_000,
    );
    // The agent's kept-alive connection to its service, if it had one over the port, is gone after 5 s idle.
    await new Promise((waited) => setTimeout(waited, 7000));
    mkdirSync(join(repo, 'flows/later'));
    writeFileSync(join(repo, 'flows/later/flow.yaml'), 'later\n');
    await eventually(() => expect(stored()).toEqual(['flow.yaml', 'main.yaml']), 30_000, 200);

    // The commands reach the agent and its service through those sockets.
    const status = await runFlowsync(['status'], { env });
    expect(status.code, status.stderr).toBe(0);
    expect(status.stdout).toContain('Agent: running');
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
    const doctor = await runFlowsync(['doctor', '--json'], { env });
    const agentLine = (
      JSON.parse(doctor.stdout) as { check: string; verdict: string; message: string }[]
    ).find((check) => check.check === 'agent');
    expect(agentLine).toMatchObject({ verdict: 'pass' });

    agent.signal('SIGINT');
    expect(await agent.exitWithin()).toBe(0);
    agent = undefined;
    // The run's folders go with it.
    expect(readdirSync(runtime)).toEqual([]);
  }, 180_000);
});
