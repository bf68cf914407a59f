import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { startAgentProcess, userEnv, type AgentProcess } from '../support/agent-process.ts';
import { runFlowsync } from '../support/cli.ts';
import { makeRepo, type TestRepo } from '../support/repo.ts';
import { startTestService, type TestService } from '../support/service.ts';

let used: TestService;
let triedOnce: TestService;
let repo: TestRepo;
/** A second repository beside the first, removed from the config after its first sync. */
let removed: string;
let env: NodeJS.ProcessEnv;
let configPath: string;
let agent: AgentProcess | null = null;

beforeEach(async () => {
  used = await startTestService();
  triedOnce = await startTestService();
  repo = makeRepo({ 'flows/a/x.yaml': 'x\n', 'flows/b/y.yaml': 'y\n' });
  removed = join(repo.dir, 'removed');
  mkdirSync(join(removed, 'flows/c'), { recursive: true });
  writeFileSync(join(removed, 'flows/c/z.yaml'), 'z\n');
  const home = join(repo.dir, 'home');
  env = {
    ...userEnv(home),
    FLOWSYNC_URL: '',
    FLOWSYNC_TOKEN: used.tokens.user,
    FLOWSYNC_ADMIN_TOKEN: '',
  };
  configPath = join(home, '.config/flowsync/config.json');
});
afterEach(async () => {
  agent?.signal('SIGKILL');
  await agent?.exited;
  agent = null;
  await used.close();
  await triedOnce.close();
  repo.cleanup();
});

function writeConfig(repositories: string[]): void {
  mkdirSync(join(configPath, '..'), { recursive: true });
  writeFileSync(
    configPath,
    JSON.stringify({ serviceUrl: used.url, repositories: repositories.map((path) => ({ path })) }),
  );
}

interface JsonStatus {
  root: string;
  service: string;
  current: boolean;
  counts: { files: number; pending: number };
  agent: string;
  inSync: boolean;
  syncState: string;
  reason: string | null;
}

async function status(...args: string[]) {
  const result = await runFlowsync(['status', ...args], { env });
  expect(result.code, result.stderr).toBe(0);
  return result.stdout;
}

describe('flowsync status', () => {
  it('shows the repositories of the config with the current service; other services only with --all', async () => {
    writeConfig([repo.root, removed]);
    const synced = await runFlowsync(['sync', repo.root, removed], { env });
    expect(synced.code, synced.stderr).toBe(0);
    // A URL tried once: the state keeps an outbox for it, everything pending.
    const tried = await runFlowsync(['sync', repo.root, '--url', triedOnce.url], {
      env: { ...env, FLOWSYNC_TOKEN: triedOnce.tokens.user },
    });
    expect(tried.code, tried.stderr).toBe(0);
    // The window's Remove: the folder leaves the config file; the state still has its rows.
    writeConfig([repo.root]);

    const text = await status();
    expect(text).toContain(`local/repo  ${repo.root}  (${used.url}, current service)`);
    expect(text.split(repo.root)).toHaveLength(2);
    expect(text).not.toContain(removed);
    expect(text).not.toContain(triedOnce.url);
    expect(text).toContain('1 entry for another service: flowsync status --all');

    const all = await status('--all');
    expect(all).toContain(`local/repo  ${repo.root}  (${used.url}, current service)`);
    expect(all).toContain(`local/repo  ${repo.root}  (${triedOnce.url}, another service)`);
    expect(all).not.toContain(removed);
    expect(all).not.toContain('flowsync status --all');

    const json = JSON.parse(await status('--json')) as JsonStatus[];
    expect(json.map(({ root, service, current }) => ({ root, service, current }))).toEqual([
      { root: repo.root, service: used.url, current: true },
    ]);
    const jsonAll = JSON.parse(await status('--json', '--all')) as JsonStatus[];
    expect(jsonAll.map(({ service, current }) => ({ service, current }))).toEqual([
      { service: used.url, current: true },
      { service: triedOnce.url, current: false },
    ]);

    // The current service is the one the agent would use: --url, then $FLOWSYNC_URL, then the config file.
    const other = await runFlowsync(['status', '--json', '--url', triedOnce.url], { env });
    expect((JSON.parse(other.stdout) as JsonStatus[]).map((s) => s.service)).toEqual([triedOnce.url]);
    const fromEnv = await runFlowsync(['status'], { env: { ...env, FLOWSYNC_URL: triedOnce.url } });
    expect(fromEnv.stdout).toContain(`(${triedOnce.url}, current service)`);
    expect(fromEnv.stdout).not.toContain(used.url);
  }, 60_000);

  // Issue 45, failure 5: with no agent running, the state's counts are not the disk's; `status` said "0 pending"
  // and nothing else, which read as in sync over an edit made after the agent stopped.
  it('never reads as in sync while no agent runs: it says so, and that edits since are not counted', async () => {
    writeConfig([repo.root]);
    agent = startAgentProcess(['start', repo.root], env);
    await agent.waitFor(/Watching 1 repository/, 60_000);
    const watched = (JSON.parse(await status('--json')) as JsonStatus[])[0]!;
    expect(watched).toMatchObject({ agent: 'running', inSync: true, syncState: 'in sync', reason: null });
    // In words too, the word the window's badge and the tray say: "0 pending" alone said nothing of the rest.
    expect(await status()).toMatch(/, 0 pending, 0 not sent, last sync [^\n]*\n {2}now: in sync\n/);
    agent.signal('SIGINT');
    expect(await agent.exitWithin()).toBe(0);
    agent = null;

    // An edit while no agent runs: nothing counts it, so nothing may say the repository is in sync.
    repo.write('flows/a/x.yaml', 'x edited while no agent runs\n');
    const json = (JSON.parse(await status('--json')) as JsonStatus[])[0]!;
    expect(json).toMatchObject({ agent: 'not running', inSync: false, syncState: 'not watched' });
    expect(json.reason).toBe(
      'no agent watches it: changes on disk since its last sync are not counted (`flowsync sync` looks)',
    );
    const text = await status();
    expect(text).toContain('Agent: not running');
    expect(text).not.toMatch(/\b0 pending/);
    expect(text).toMatch(/2 flows, 2 files, pending not known, 0 not sent, last sync /);
    expect(text).toContain('\n  no agent watches it: changes on disk since its last sync are not counted');

    // `flowsync sync` looks at the disk and sends the edit; still no agent watches what comes next.
    const synced = await runFlowsync(['sync', repo.root], { env });
    expect(synced.code, synced.stderr).toBe(0);
    expect((JSON.parse(await status('--json')) as JsonStatus[])[0]).toMatchObject({
      agent: 'not running',
      inSync: false,
      counts: { pending: 0 },
    });
  }, 90_000);

  it('names the embedded service when no URL is configured', async () => {
    writeConfig([]);
    writeFileSync(configPath, JSON.stringify({ repositories: [{ path: repo.root }] }));
    const synced = await runFlowsync(['sync', repo.root, '--url', used.url], { env });
    expect(synced.code, synced.stderr).toBe(0);
    const text = await status();
    expect(text).not.toContain(used.url);
    expect(text).toContain('1 entry for another service: flowsync status --all');
    expect(text).toContain('No repositories synced with the embedded service yet');
  }, 60_000);
});
