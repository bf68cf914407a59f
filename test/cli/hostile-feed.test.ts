import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  NO_KEYCHAIN,
  startAgentProcess,
  userEnv,
  writeAgentConfig,
  type AgentProcess,
} from '../support/agent-process.ts';
import { startFaultProxy, type FaultProxy } from '../support/fault-proxy.ts';
import { eventually, makeRepo, serviceTree, type TestRepo } from '../support/repo.ts';
import { startTestService, type TestService } from '../support/service.ts';

/**
 * The live feed from a hostile service (issue 47): a real service behind a proxy that answers `changes` as an
 * attacker who controls the service would. Whatever it says, the agent does not spin (its calls are spaced, its
 * looks at most half its time), writes nothing outside the repository, and goes on sending its user's edits.
 */
const CHANGES = '/api/run/svc/flow_def/public/changes';
const CANARY = 'echo the user wrote this\n';

let svc: TestService;
let proxy: FaultProxy;
let repo: TestRepo;
let home: string;
let agent: AgentProcess | null = null;

beforeEach(async () => {
  svc = await startTestService();
  proxy = await startFaultProxy(svc.url);
  repo = makeRepo({ 'flows/a/x.yml': 'x: 1\n', 'flows/b/y.yml': 'y: 1\n' });
  home = join(repo.dir, 'home');
  const env = {
    ...userEnv(home, { url: proxy.url, tokens: svc.tokens }),
    ...NO_KEYCHAIN,
    FLOWSYNC_LIVE: 'on',
  };
  writeAgentConfig(env, [{ path: repo.root, owner: 'acme', name: 'app' }]);
  mkdirSync(join(home, '.ssh'), { recursive: true });
  writeFileSync(join(home, '.ssh/authorized_keys'), CANARY);
  agent = startAgentProcess(['start', repo.root], env);
});

afterEach(async () => {
  agent?.signal('SIGINT');
  await agent?.exitWithin(15_000);
  agent = null;
  await proxy.close();
  await svc.close();
  repo.cleanup();
});

const answer = (value: unknown) => ({ status: 200, body: JSON.stringify({ status: 'success', value }) });
const hash = (n: number) => n.toString(16).padStart(64, '0');
/** How many calls to `path` the agent makes in `ms` from now. */
async function callsWithin(path: string, ms: number): Promise<number> {
  const from = proxy.requests.length;
  await new Promise((resolve) => setTimeout(resolve, ms));
  return proxy.requests.slice(from).filter((called) => called === path).length;
}

/** The user's edit still reaches the service. */
async function editStillSent(): Promise<void> {
  writeFileSync(join(repo.root, 'flows/a/x.yml'), 'x: edited\n');
  await eventually(
    () => expect(serviceTree(svc.read, 'acme', 'app')['flows/a/x.yml']).toBe('x: edited\n'),
    30_000,
  );
}

describe('a hostile live feed', { timeout: 120_000 }, () => {
  it('that names a thousand flows changed at every answer, at once, with a cursor that never moves', async () => {
    let n = 0;
    proxy.fault = (path) =>
      path === CHANGES
        ? answer({
            cursor: '1.1',
            gap: false,
            more: true,
            changes: Array.from({ length: 1_000 }, (_, i) => ({
              repo_owner: 'acme',
              repo_name: 'app',
              flow_path: `flows/f${i}`,
              hash: hash(n++),
              written_by: 'mallory',
            })),
          })
        : null;
    await agent!.waitFor(/Watching 1 repository/, 60_000);
    // Spaced: at most one call each 250 ms (a cursor that does not move is not followed at once).
    expect(await callsWithin(CHANGES, 5_000)).toBeLessThanOrEqual(5_000 / 250 + 2);
    await editStillSent();
  });

  it('that names paths out of the repository: refused whole, nothing written, the feed backs off', async () => {
    proxy.fault = (path) =>
      path === CHANGES
        ? answer({
            cursor: '2.2',
            gap: false,
            more: false,
            changes: [
              {
                repo_owner: 'acme',
                repo_name: 'app',
                flow_path: '../../home/.ssh',
                hash: hash(1),
                written_by: null,
              },
              { repo_owner: 'acme', repo_name: 'app', flow_path: '/etc', hash: hash(2), written_by: null },
            ],
          })
        : null;
    await agent!.waitFor(/Watching 1 repository/, 60_000);
    // Backing off: 1, 2, 4 s… between calls, not a call a second.
    expect(await callsWithin(CHANGES, 6_000)).toBeLessThanOrEqual(4);
    await editStillSent();
    expect(readFileSync(join(home, '.ssh/authorized_keys'), 'utf8')).toBe(CANARY);
  });

  it('that says there is a gap at every answer: one look at every flow in 30 s, not one a second', async () => {
    proxy.fault = (path) =>
      path === CHANGES ? answer({ cursor: '3.3', gap: true, more: false, changes: [] }) : null;
    await agent!.waitFor(/Watching 1 repository/, 60_000);
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    expect(await callsWithin('/api/run/svc/flow_def/public/list_flows', 6_000)).toBeLessThanOrEqual(1);
    await editStillSent();
  });
});
