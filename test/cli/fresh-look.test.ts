import { afterEach, describe, expect, it } from 'vitest';
import { startAgentProcess, type AgentProcess } from '../support/agent-process.ts';
import { FLOWSYNC_BIN, packagesLoadedBy, type CliResult } from '../support/cli.ts';
import { eventually } from '../support/repo.ts';
import { startTeam, type Team } from '../support/team.ts';

/**
 * Issue 47, "in sync" only after a fresh look, as Ada and Bob live it (one `flowsync serve`, a clone each, real
 * git): `status` and the stop line of `start` look at the service before they speak, so Bob's edit is newer on the
 * service at once, not at the next look every 45 s (the agents here look once an hour by themselves, so only the
 * fresh look can find it); `status` exits 5 for it; a service that does not answer is never "in sync", only "in
 * sync as of" the last look; and the terminal says when "newer" clears.
 */
let team: Team | null = null;
const agents: AgentProcess[] = [];

afterEach(async () => {
  for (const agent of agents.splice(0)) {
    agent.signal('SIGINT');
    await agent.exitWithin(15_000);
  }
  await team?.close();
  team = null;
});

/** The periodic look at the service out of the way: an hour, so that what is seen is the fresh look's. */
const NO_PERIODIC_LOOK = { FLOWSYNC_SERVICE_CHECK_MS: '3600000' };

function start(args: string[], env: NodeJS.ProcessEnv): AgentProcess {
  const agent = startAgentProcess(args, { ...env, ...NO_PERIODIC_LOOK });
  agents.push(agent);
  return agent;
}

/** Ada and Bob, both synced with the service; Bob's edit of build.yml then on the service, not on Ada's disk. */
async function teammateEdits(agentForAda: boolean, adaEnv: NodeJS.ProcessEnv = {}) {
  team = await startTeam({ 'flows/ci/build.yml': 'build: 1\n', 'flows/ci/test.yml': 'test: 1\n' });
  const ada = team.person('ada');
  const bob = team.person('bob');
  const agent = agentForAda ? start(['start', ada.root], { ...ada.env, ...adaEnv }) : null;
  if (agent) await agent.waitFor(/Watching 1 repository/, 60_000);
  else expect((await ada.flowsync('sync', ada.root)).code).toBe(0);
  expect((await bob.flowsync('sync', bob.root)).code).toBe(0);
  const edit = async () => {
    bob.write('flows/ci/build.yml', 'build: bob\n');
    const sent = await bob.flowsync('sync', bob.root);
    expect(sent.code, sent.stdout + sent.stderr).toBe(0);
    expect(team!.stored()['flows/ci/build.yml']).toBe('build: bob\n');
  };
  return { ada, bob, agent, edit };
}

interface JsonStatus {
  inSync: boolean;
  syncState: string;
  reason: string | null;
  counts: { behind: number };
  newerOnService: number;
  lookedAt: string | null;
  serviceReached: boolean | null;
}

describe('"in sync" only after a fresh look at the service', () => {
  it("with no agent running, status's look loads what it needs only: the service's client, not the window's server", async () => {
    const { ada } = await teammateEdits(false);
    // Issue 50: the agent opened for the look imported the window's chunk, and with it fastify and 350 schemas.
    const loaded = packagesLoadedBy(FLOWSYNC_BIN, ['status'], ada.env);
    expect(loaded).toContain('undici'); // it looked at the service
    expect(loaded).not.toContain('fastify');
  });

  it("with no agent running, status looks at the service: a teammate's edit is newer at once (exit 5); a service that does not answer is said (exit 3)", async () => {
    const { ada, edit } = await teammateEdits(false);
    await edit();

    const status = await ada.flowsync('status');
    expect(status.code, status.stdout + status.stderr).toBe(5);
    expect(status.stdout).toMatch(/1 file newer on the service, by \S*bob/);
    const json = JSON.parse((await ada.flowsync('status', '--json')).stdout) as JsonStatus[];
    expect(json[0]).toMatchObject({
      inSync: false,
      newerOnService: 1,
      counts: { behind: 1 },
      serviceReached: true,
    });
    expect(json[0]!.lookedAt).not.toBeNull();
    // What the look recorded is the state's: `resolve --newer` takes it, and status exits 0 again.
    const taken = await ada.flowsync('resolve', '--newer', ada.root);
    expect(taken.code, taken.stdout + taken.stderr).toBe(0);
    expect(ada.read('flows/ci/build.yml')).toBe('build: bob\n');
    expect((await ada.flowsync('status')).code).toBe(0);

    // The service stopped: status cannot look, and says so; never 0.
    await team!.serve.stop();
    const away = await ada.flowsync('status');
    expect(away.code, away.stdout + away.stderr).toBe(3);
    expect(away.stdout).toContain('the service could not be reached now');
    const awayJson = JSON.parse((await ada.flowsync('status', '--json')).stdout) as JsonStatus[];
    expect(awayJson[0]).toMatchObject({ inSync: false, serviceReached: false });
  }, 180_000);

  it("with an agent running, status asks it to look now: a teammate's edit is newer at once (exit 5), and its terminal says when that clears, and why", async () => {
    const { ada, bob, agent, edit } = await teammateEdits(true);
    expect((await ada.flowsync('status')).code).toBe(0);
    await edit();

    const status = await ada.flowsync('status');
    expect(status.code, status.stdout + status.stderr).toBe(5);
    expect(status.stdout).toMatch(/your changes are sent; 1 file newer on the service, by \S*bob/);
    expect(status.stdout).not.toMatch(/in sync/);
    const json = JSON.parse((await ada.flowsync('status', '--json')).stdout) as JsonStatus[];
    expect(json[0]).toMatchObject({ inSync: false, syncState: 'behind', newerOnService: 1 });
    // The look was the agent's: its terminal says it too.
    await agent!.waitFor(/1 file newer on the service, by \S*bob/);

    // Bob reverts his edit: the next look finds nothing newer, and the terminal says so, and why.
    bob.write('flows/ci/build.yml', 'build: 1\n');
    expect((await bob.flowsync('sync', bob.root)).code).toBe(0);
    expect((await ada.flowsync('status')).code).toBe(0);
    await agent!.waitFor(/No file is newer on the service any more: reverted there/);

    // He edits it again; Ada takes it: said too.
    await edit();
    expect((await ada.flowsync('status')).code).toBe(5);
    const taken = await ada.flowsync('resolve', '--newer', ada.root);
    expect(taken.code, taken.stdout + taken.stderr).toBe(0);
    await agent!.waitFor(/No file is newer on the service any more: taken/);
    // Once the agent has seen the file it wrote (a scan of it is "looking", not yet in sync): in sync, looked at now.
    await eventually(async () => {
      const after = JSON.parse((await ada.flowsync('status', '--json')).stdout) as JsonStatus[];
      expect(after[0]).toMatchObject({ inSync: true, syncState: 'in sync', serviceReached: true });
    });
  }, 180_000);

  it("the stop line looks first: a teammate's edit just before Ctrl-C is newer, never 'everything was in sync'", async () => {
    const { agent, edit } = await teammateEdits(true);
    await edit();
    agent!.signal('SIGINT');
    expect(await agent!.exitWithin(15_000)).toBe(0);
    agents.length = 0;
    expect(agent!.output()).toMatch(
      /Stopped; your changes are sent; 1 file newer on the service, by \S*bob\S*( \(checkout [0-9a-f]+\))?: `flowsync resolve --newer` takes them/,
    );
    expect(agent!.output()).not.toContain('everything was in sync');
  }, 180_000);

  it('a service that does not answer: status says in sync only as of the last look (exit 3), and so does the stop line', async () => {
    const { ada, agent } = await teammateEdits(true);
    await team!.serve.stop();

    const status = await ada.flowsync('status');
    expect(status.code, status.stdout + status.stderr).toBe(3);
    expect(status.stdout).toMatch(/in sync as of \d\d:\d\d; the service could not be reached now/);
    const json = JSON.parse((await ada.flowsync('status', '--json')).stdout) as JsonStatus[];
    expect(json[0]).toMatchObject({ inSync: false, syncState: 'not reached', serviceReached: false });

    agent!.signal('SIGINT');
    expect(await agent!.exitWithin(15_000)).toBe(0);
    agents.length = 0;
    expect(agent!.output()).toMatch(
      /Stopped; in sync as of \d\d:\d\d; the service could not be reached now\./,
    );
    expect(agent!.output()).not.toContain('everything was in sync');
  }, 180_000);

  it('a service that hangs (frozen mid-call): the look is waited for only so long, then said not reached; Ctrl-C still stops', async () => {
    // The live feed's call held 1 s, not 25: the feed stops counting as a look some 6 s after the service froze.
    const { ada, agent } = await teammateEdits(true, { FLOWSYNC_LIVE_WAIT_MS: '1000' });
    team!.serve.signal('SIGSTOP');

    let status: CliResult | null = null;
    await eventually(async () => {
      status = await ada.flowsync('status');
      expect(status.code, status.stdout + status.stderr).toBe(3);
    }, 60_000);
    expect(status!.stdout).toMatch(
      /in sync as of \d\d:\d\d; the service could not be reached now \(no answer within 5 s\)/,
    );

    agent!.signal('SIGINT');
    expect(await agent!.exitWithin(15_000)).toBe(0);
    agents.length = 0;
    expect(agent!.output()).toMatch(
      /Stopped; in sync as of \d\d:\d\d; the service could not be reached now\./,
    );
  }, 180_000);
});
