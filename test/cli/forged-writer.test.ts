import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { startAgentProcess, type AgentProcess } from '../support/agent-process.ts';
import { fileEntry } from '../support/flows.ts';
import { memberToken } from '../support/members.ts';
import { eventually } from '../support/repo.ts';
import { baggage, callFunction } from '../support/service.ts';
import { startTeam, teamServices, type Team } from '../support/team.ts';

/**
 * A forged writer's label (issue 48, T2), as the attack is made: a real `flowsync serve`, alice and bob members with
 * their own tokens. Alice's agent runs in her own HOME; bob, with his own token, writes her file without a base and
 * with `x-flowsync-writer` set to her checkout's exact label, read from `list_files`. The label is only the client's
 * word: alice's agent names the version bob's (newer on the service, then a conflict once she edits), and keeps her
 * edit. Before the agent asked the service who it is, it took the label at its word: the version was "by" alice's
 * own checkout, and bob not a teammate at all. On one serve's SQLite file, and on two serve processes on one
 * Postgres (bob writes through the second, alice's agent is on the first).
 */
let team: Team | null = null;
let agent: AgentProcess | null = null;
const services = teamServices();

afterAll(() => services.stop());

afterEach(async () => {
  agent?.signal('SIGINT');
  await agent?.exitWithin(15_000);
  agent = null;
  await team?.close();
  team = null;
});

/** A write with bob's token that claims to be another checkout: the header set by hand, as a script would. */
async function forgedWrite(url: string, token: string, label: string, content: string): Promise<number> {
  const response = await fetch(`${url}/api/run/svc/flow_def/action/sync_batch/run`, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      authorization: `Bearer ${token}`,
      'x-flowsync-writer': label,
    },
    body: JSON.stringify({
      args: {
        baggage: baggage(),
        repo_owner: 'acme',
        repo_name: 'app',
        // No base: an overwrite of whatever the service holds.
        flows: [{ flow_path: 'flows/ci', files: [fileEntry('build.yml', content)] }],
      },
    }),
  });
  await response.text();
  return response.status;
}

describe.each(services.where)('a forged writer label (T2), %s', (_where, options) => {
  it("bob writing under alice's exact label is bob's version to her agent: newer by bob, then a conflict by bob; her edit stays", async () => {
    team = await startTeam(
      { 'flows/ci/build.yml': 'build: 1\n', 'flows/ci/test.yml': 'test: 1\n' },
      await options(),
    );
    const { url } = team.serve;
    // Bob's calls reach the last process; alice's agent the first.
    const bobs = team.serves.at(-1)!.url;
    const operator = `Admin ${team.serve.tokens.admin}`;
    const aliceToken = await memberToken(url, operator, 'alice', 'write');
    const bobToken = await memberToken(url, operator, 'bob', 'write');
    const alice = team.person('alice');
    alice.env.FLOWSYNC_TOKEN = aliceToken;

    agent = startAgentProcess(['start', alice.root], alice.env);
    await agent.waitFor(/Watching 1 repository/, 60_000);

    // Her checkout's label, as anyone with a read of the repository sees it.
    const listed = await callFunction(bobs, `Bearer ${bobToken}`, 'svc/flow_def/public/list_files', {
      repo_owner: 'acme',
      repo_name: 'app',
    });
    expect(listed.statusCode).toBe(200);
    const build = (
      listed.body.value as { files: { path: string; written_by: string; member?: { name: string } }[] }
    ).files.find((file) => file.path === 'build.yml')!;
    expect(build.member?.name).toBe('alice');
    const label = build.written_by;
    expect(label).toMatch(/\(checkout [0-9a-f]{12}\)$/);

    expect(await forgedWrite(bobs, bobToken, label, 'build: bob\n')).toBe(200);
    // The service credits bob, whatever the header said.
    const versions = await callFunction(url, `Bearer ${aliceToken}`, 'svc/flow_def/public/file_versions', {
      repo_owner: 'acme',
      repo_name: 'app',
      flow_path: 'flows/ci',
      path: 'build.yml',
    });
    const newest = (versions.body.value as { versions: { written_by: string; member: { name: string } }[] })
      .versions[0]!;
    expect(newest).toMatchObject({ written_by: label, member: { name: 'bob' } });

    // Her agent's look names it bob's: newer on the service, by bob (with the label he claimed beside it).
    await eventually(
      async () => {
        const status = await alice.flowsync('status', '--json');
        const [repository] = JSON.parse(status.stdout) as {
          newer?: { path: string; writtenBy: string | null }[];
        }[];
        expect(repository?.newer?.map((file) => `${file.path} by ${file.writtenBy}`)).toEqual([
          `build.yml by bob · ${label}`,
        ]);
      },
      30_000,
      200,
    );

    // She edits it: her send is refused for bob's version, a conflict by bob, and her edit stays on her disk.
    alice.write('flows/ci/build.yml', 'build: alice\n');
    await eventually(
      async () => {
        const conflicts = await alice.flowsync('conflicts', alice.root);
        expect(conflicts.code).toBe(4);
        expect(conflicts.stdout).toContain(
          `flows/ci/build.yml: changed on the service by bob · ${label} at `,
        );
      },
      30_000,
      200,
    );
    expect(alice.read('flows/ci/build.yml')).toBe('build: alice\n');
    expect(team.stored()['flows/ci/build.yml']).toBe('build: bob\n');
  }, 180_000);

  it('from a fresh state (the state file lost, the checkout id kept): the forged version is a conflict by bob', async () => {
    team = await startTeam({ 'flows/ci/build.yml': 'build: 1\n' }, await options());
    const { url } = team.serve;
    const bobs = team.serves.at(-1)!.url;
    const operator = `Admin ${team.serve.tokens.admin}`;
    const aliceToken = await memberToken(url, operator, 'alice', 'write');
    const bobToken = await memberToken(url, operator, 'bob', 'write');
    const alice = team.person('alice');
    alice.env.FLOWSYNC_TOKEN = aliceToken;
    agent = startAgentProcess(['start', alice.root], alice.env);
    await agent.waitFor(/Watching 1 repository/, 60_000);
    agent.signal('SIGINT');
    await agent.exitWithin(15_000);
    agent = null;
    const listed = await callFunction(bobs, `Bearer ${bobToken}`, 'svc/flow_def/public/list_files', {
      repo_owner: 'acme',
      repo_name: 'app',
    });
    const label = (listed.body.value as { files: { written_by: string }[] }).files[0]!.written_by;

    // Her state is lost (its checkout id is kept beside it, so her label is the same); she edits meanwhile.
    const data = join(alice.env.XDG_DATA_HOME!, 'flowsync');
    for (const file of ['state.db', 'state.db-wal', 'state.db-shm'])
      rmSync(join(data, file), { force: true });
    alice.write('flows/ci/build.yml', 'build: alice\n');
    expect(await forgedWrite(bobs, bobToken, label, 'build: bob\n')).toBe(200);

    agent = startAgentProcess(['start', alice.root], alice.env);
    await agent.waitFor(/Watching 1 repository/, 60_000);
    await eventually(
      async () => {
        const conflicts = await alice.flowsync('conflicts', alice.root);
        expect(conflicts.code).toBe(4);
        expect(conflicts.stdout).toContain(
          `flows/ci/build.yml: changed on the service by bob · ${label} at `,
        );
      },
      30_000,
      200,
    );
    expect(alice.read('flows/ci/build.yml')).toBe('build: alice\n');
    expect(team.stored()['flows/ci/build.yml']).toBe('build: bob\n');
  }, 180_000);
});
