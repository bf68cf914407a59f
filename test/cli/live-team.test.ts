import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { startAgentProcess, type AgentProcess } from '../support/agent-process.ts';
import { startPostgresCluster, type PostgresCluster } from '../support/postgres.ts';
import { eventually } from '../support/repo.ts';
import { startServeProcess, type ServeProcess } from '../support/serve-process.ts';
import { startTeam, type Developer, type Team } from '../support/team.ts';

/**
 * A live team (issue 47), as Ada and Bob live it: a clone and a running agent each, on one `flowsync serve` (and on
 * two serve processes sharing one Postgres, each agent on its own). Their look at the service every minute is set
 * to ten minutes here, so whatever Ada sees of Bob's edit, deletion and revert within the test's wait came through
 * the live feed. No timing is asserted: bench/live.ts measures it.
 */
const TEN_MINUTES = 600_000;
let team: Team | null = null;
let restarted: ServeProcess | null = null;
const agents: AgentProcess[] = [];

afterEach(async () => {
  for (const agent of agents.splice(0)) {
    agent.signal('SIGINT');
    await agent.exitWithin(15_000);
  }
  await restarted?.stop();
  restarted = null;
  await team?.close();
  team = null;
});

const files = {
  'flows/ci/build.yml': 'build: 1\n',
  'flows/ci/test.yml': 'test: 1\n',
  'flows/cd/ship.yml': 'ship: 1\n',
};

async function watching(person: Developer): Promise<AgentProcess> {
  const agent = startAgentProcess(['start', person.root], person.env);
  agents.push(agent);
  await agent.waitFor(/Watching 1 repository/, 60_000);
  return agent;
}

/** What `flowsync status --json` says is newer on the service for this developer's checkout. */
async function newer(person: Developer): Promise<string[]> {
  const status = await person.flowsync('status', '--json');
  const [repository] = JSON.parse(status.stdout) as {
    newer?: { flowPath: string; path: string; writtenBy: string | null }[];
  }[];
  // Who deleted a file is not known from a listing (the file is not in it): "by someone".
  return (repository?.newer ?? []).map(
    (file) =>
      `${file.flowPath}/${file.path} by ${file.writtenBy === null ? 'someone' : file.writtenBy.includes('/bob/') ? 'bob' : file.writtenBy}`,
  );
}

/** Bob edits, deletes, then reverts both; Ada's status says each, and clears, with no look of her agent's own. */
async function editDeleteRevert(ada: Developer, bob: Developer): Promise<void> {
  bob.write('flows/ci/build.yml', 'build: bob\n');
  await eventually(async () => expect(await newer(ada)).toEqual(['flows/ci/build.yml by bob']), 30_000, 200);

  bob.remove('flows/ci/test.yml');
  await eventually(
    async () =>
      expect(await newer(ada)).toEqual(['flows/ci/build.yml by bob', 'flows/ci/test.yml by someone']),
    30_000,
    200,
  );

  bob.write('flows/ci/build.yml', 'build: 1\n');
  bob.write('flows/ci/test.yml', 'test: 1\n');
  await eventually(async () => expect(await newer(ada)).toEqual([]), 30_000, 200);
  expect(ada.read('flows/ci/build.yml')).toBe('build: 1\n');
}

describe('a live team on one flowsync serve', { timeout: 240_000 }, () => {
  it("shows a teammate's edit, deletion and revert in the other checkout's status without its minute's look", async () => {
    team = await startTeam(files, { serviceCheckMs: TEN_MINUTES, live: true });
    const ada = team.person('ada');
    const bob = team.person('bob');
    const adaAgent = await watching(ada);
    await watching(bob);
    await editDeleteRevert(ada, bob);
    // Said in Ada's terminal as it came.
    expect(adaAgent.output()).toMatch(/1 file newer on the service/);
  });

  it('catches up from its cursor after the service is killed and restarted, without listing every flow again', async () => {
    team = await startTeam(files, { serviceCheckMs: TEN_MINUTES, live: true });
    const ada = team.person('ada');
    const bob = team.person('bob');
    await watching(ada);
    await watching(bob);
    bob.write('flows/cd/ship.yml', 'ship: 2\n');
    await eventually(async () => expect(await newer(ada)).toEqual(['flows/cd/ship.yml by bob']), 30_000, 200);

    // kill -9, then the same database on the same port: both agents' calls fail meanwhile, and are sent again.
    team.serve.signal('SIGKILL');
    const log = join(team.dir, 'restarted.log');
    restarted = await startServeProcess(join(team.dir, 'service.db'), log, [
      '--port',
      String(team.serve.port),
    ]);
    bob.write('flows/ci/build.yml', 'build: after the restart\n');
    // Read through Ada's agent's bridge, as the window reads it: `flowsync status` looks at every flow itself when it
    // asks while the feed is still reconnecting (a fresh look before "in sync", by design: issue 47), and what is
    // proven here is that the agent catches up on its own. That look made this test fail 2 runs of 3.
    await eventually(
      async () => expect((await ada.bridge().status()).repositories[0]?.counts.behind).toBe(2),
      60_000,
      300,
    );
    // Ada's agent asked the restarted service for what changed after its cursor and listed only that flow; no agent
    // listed every flow again (reads carry no writer's name, so the calls of both are counted).
    const calls = () =>
      readFileSync(log, 'utf8')
        .split('\n')
        .filter((line) => line.includes('"msg":"call"'))
        .map((line) => (JSON.parse(line) as { fn: string }).fn);
    await eventually(() => {
      expect(calls()).toContain('svc/flow_def/public/changes');
      expect(calls()).toContain('svc/flow_def/public/list_files');
    }, 10_000);
    expect(calls()).not.toContain('svc/flow_def/public/list_flows');
    expect(await newer(ada)).toEqual(['flows/cd/ship.yml by bob', 'flows/ci/build.yml by bob']);
  });
});

describe('a live team on two service processes sharing one Postgres', { timeout: 240_000 }, () => {
  let cluster: PostgresCluster | null = null;
  beforeAll(async () => {
    cluster = await startPostgresCluster();
  }, 60_000);
  afterAll(() => cluster?.stop());

  it("tells Ada, on one process, Bob's edit, deletion and revert written through the other (LISTEN/NOTIFY)", async () => {
    team = await startTeam(files, {
      serviceCheckMs: TEN_MINUTES,
      live: true,
      postgres: { url: await cluster!.createDatabase(), processes: 2 },
    });
    const ada = team.person('ada', 0);
    const bob = team.person('bob', 1);
    await watching(ada);
    await watching(bob);
    await editDeleteRevert(ada, bob);
  });
});
