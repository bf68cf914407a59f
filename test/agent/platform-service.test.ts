import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { startAgentProcess, userEnv, type AgentProcess } from '../support/agent-process.ts';
import { runFlowsync } from '../support/cli.ts';
import {
  PLATFORM,
  isSpecFunction,
  startPlatform,
  type PlatformAnswer,
  type PlatformService,
} from '../support/platform.ts';
import { diskTree, eventually, makeRepo, type TestRepo } from '../support/repo.ts';

// Issue 37: the agent's main scenarios against a service that answers as the spec's platform does (200 error
// envelopes, `{code, message}` system errors, its limits), as a new user would meet it. Before: not one file synced,
// the agent "offline … retrying" forever on the first call (`capabilities`, answered with a 200 error envelope).

const SYNC_BATCH = 'svc/flow_def/action/sync_batch/run';
let platform: PlatformService;
let repo: TestRepo;
let env: NodeJS.ProcessEnv;
const agents: AgentProcess[] = [];

beforeEach(async () => {
  platform = await startPlatform();
  repo = makeRepo({
    'flows/hello/main.yaml': 'steps: []\n',
    'flows/hello/lib/util.yaml': 'util: 1\n',
    'flows/deploy/main.yaml': 'deploy: prod\n',
  });
  env = { ...userEnv(join(repo.dir, 'home'), { url: platform.url, tokens: { user: platform.token } }) };
});
afterEach(async () => {
  for (const agent of agents.splice(0)) {
    agent.signal('SIGKILL');
    await agent.exited;
  }
  await platform.close();
  repo.cleanup();
});

const stored = () => platform.tree('local', 'repo');
const sync = () => runFlowsync(['sync', repo.root], { env, timeoutMs: 60_000 });

describe('flowsync on a service of the spec, answering as its platform does', () => {
  it('first sync, an edit, a deletion: each arrives; only the spec is called, and what it lacks is said', async () => {
    const first = await sync();
    expect(first.code, first.stderr).toBe(0);
    expect(stored()).toEqual(diskTree(repo.root));

    repo.write('flows/hello/main.yaml', 'steps: [build]\n');
    const edit = await sync();
    expect(edit.code, edit.stderr).toBe(0);
    expect(stored()['flows/hello/main.yaml']).toBe('steps: [build]\n');

    repo.remove('flows/hello/lib/util.yaml');
    const deletion = await sync();
    expect(deletion.code, deletion.stderr).toBe(0);
    expect(stored()).toEqual(diskTree(repo.root));

    // Asked once what it does beyond the spec; then only the 20 functions.
    const beyond = platform.calls.filter((fn) => !isSpecFunction(fn));
    expect(new Set(beyond)).toEqual(new Set(['svc/flow_def/public/capabilities']));

    // What it lacks, said where a user looks (`start` and `status`: below).
    const doctor = await runFlowsync(['doctor'], { env, timeoutMs: 60_000 });
    expect(doctor.stdout).toMatch(/implements the spec alone: no history, no conflict check/);
  }, 120_000);

  it('a flow the service refuses is named in its words; the other flows go on', async () => {
    platform.refuseFlow = (flowPath) =>
      flowPath === 'flows/deploy' ? 'flows/deploy is frozen: releases are closed this week' : null;
    const run = await sync();
    expect(run.code).toBe(1);
    expect(run.stdout + run.stderr).toContain('flows/deploy is frozen: releases are closed this week');
    expect(run.stdout + run.stderr).not.toMatch(/gateway/);
    expect(stored()).toEqual({
      'flows/hello/lib/util.yaml': 'util: 1\n',
      'flows/hello/main.yaml': 'steps: []\n',
    });

    platform.refuseFlow = null;
    repo.write('flows/deploy/main.yaml', 'deploy: staging\n');
    const after = await sync();
    expect(after.code, after.stderr).toBe(0);
    expect(stored()).toEqual(diskTree(repo.root));
  }, 120_000);

  it('a body over its limit (400 BadJsonBody) names the flow as too large; the others go on', async () => {
    platform.fault = (fn, body) =>
      fn === SYNC_BATCH && body.includes('flows/deploy')
        ? {
            status: 400,
            body: {
              code: 'BadJsonBody',
              message: 'Failed to buffer the request body: length limit exceeded',
            },
          }
        : null;
    const run = await sync();
    expect(run.code).toBe(1);
    expect(run.stdout + run.stderr).toMatch(/flows\/deploy.*larger than the service accepts in one request/);
    expect(Object.keys(stored())).toEqual(['flows/hello/lib/util.yaml', 'flows/hello/main.yaml']);
  }, 120_000);

  it('401 with a {code, message} body: sign in, in its words', async () => {
    const wrong = { ...env, FLOWSYNC_TOKEN: 'expired-token' };
    const run = await runFlowsync(['sync', repo.root], { env: wrong, timeoutMs: 60_000 });
    expect(run.code).not.toBe(0);
    expect(run.stdout + run.stderr).toMatch(/Could not verify OIDC token claim/);
    expect(run.stdout + run.stderr).toMatch(/flowsync login/);
    expect(stored()).toEqual({});
  }, 120_000);

  it('`flowsync call` of a function it refuses exits 1 with its message', async () => {
    const run = await runFlowsync(
      ['call', 'svc/flow_def/public/update_file', '--args', '{"fileId":"f-404","content":"x"}'],
      { env },
    );
    expect(run.code).toBe(1);
    expect(run.stderr).toContain('No file with id f-404');
    expect(run.stderr).not.toMatch(/gateway/);
  }, 60_000);
});

describe('the agent on that service, through its passing failures', () => {
  it('"Server Error", 429, 503 and 408 bursts and an outage: it backs off, then converges', async () => {
    // One of each, in a row: the client repeats 429/503/408 itself (sync_batch is safe to repeat), the engine
    // backs off on what is left.
    const burst: (() => PlatformAnswer)[] = [
      PLATFORM.serverError,
      PLATFORM.tooManyRequests,
      PLATFORM.occ,
      PLATFORM.timeout,
    ];
    let failing = 0;
    platform.fault = (fn) =>
      fn === SYNC_BATCH && failing < burst.length ? burst[failing++ % burst.length]!() : null;
    const agent = startAgentProcess(['start', repo.root], env);
    agents.push(agent);
    await agent.waitFor(/Watching 1 repository/, 60_000);
    // Said once, at start: what this service lacks.
    await agent.waitFor(/keeps no history/, 30_000);
    await eventually(() => expect(stored()).toEqual(diskTree(repo.root)), 90_000, 200);
    expect(failing).toBe(burst.length);
    expect(agent.output()).not.toMatch(/gateway|refused/);

    // An outage: every call meets a closed door, then the service is back.
    platform.down = true;
    repo.write('flows/hello/main.yaml', 'steps: [test]\n');
    await eventually(() => expect(platform.refusedConnections).toBeGreaterThan(0), 30_000, 100);
    platform.down = false;
    await eventually(() => expect(stored()['flows/hello/main.yaml']).toBe('steps: [test]\n'), 90_000, 200);

    const status = await runFlowsync(['status'], { env });
    expect(status.stdout).toMatch(
      /keeps no history and cannot detect overwrites \(a service of the spec alone\)/,
    );
    // With no agent running, as the state remembers it.
    agent.signal('SIGTERM');
    await agent.exited;
    const stopped = await runFlowsync(['status'], { env });
    expect(stopped.stdout).toMatch(/Agent: not running/);
    expect(stopped.stdout).toMatch(/keeps no history .* the last writer wins/);
  }, 240_000);

  it('a flow it keeps answering "Server Error" for is isolated and named; the others arrive', async () => {
    platform.fault = (fn, body) =>
      fn === SYNC_BATCH && body.includes('flows/deploy') ? PLATFORM.serverError() : null;
    const agent = startAgentProcess(['start', repo.root], env);
    agents.push(agent);
    await eventually(
      () =>
        expect(stored()).toEqual({
          'flows/hello/lib/util.yaml': 'util: 1\n',
          'flows/hello/main.yaml': 'steps: []\n',
        }),
      60_000,
      200,
    );
    // Named, as waiting on its own, never as refused (the service said nothing of what went wrong).
    await eventually(
      async () =>
        expect((await runFlowsync(['status'], { env })).stdout).toMatch(/flows\/deploy could not be stored/),
      60_000,
      500,
    );
    const status = await runFlowsync(['status'], { env });
    expect(status.stdout).not.toMatch(/refused/);

    platform.fault = null;
    await eventually(() => expect(stored()).toEqual(diskTree(repo.root)), 90_000, 200);
  }, 240_000);
});
