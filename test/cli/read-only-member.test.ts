import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { ALL_FUNCTIONS } from '../../src/protocol/index.ts';
import { startAgentProcess, type AgentProcess } from '../support/agent-process.ts';
import { memberToken } from '../support/members.ts';
import { eventually } from '../support/repo.ts';
import { startTeam, teamServices, type Team } from '../support/team.ts';

/**
 * A read-only member's agent (issue 48, T4, the agent's side): a real `flowsync serve`, alice (write) and carol
 * (`--role read`) with their own tokens and HOMEs. Carol's agent takes the team's versions as usual (what alice
 * sends shows as newer on the service) and never sends: her local edit is listed "changed here, not sent: you are
 * a read-only member", and the service's log has no call of hers to a function that writes. Before, her agent sent
 * the edit, met the 403 and backed off, again and again. On one serve's SQLite file, and on two serve processes on
 * one Postgres (carol's agent on the second, alice on the first).
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

const SCOPE = new Map<string, string>(ALL_FUNCTIONS.map((fn) => [fn.path, fn.scope]));

/** The functions carol's credential called, as the service logs (every process's) name them. */
function carolsCalls(team: Team): string[] {
  const logs = team.serves.length === 1 ? ['service.log'] : team.serves.map((_, at) => `service-${at}.log`);
  return logs
    .flatMap((log) => readFileSync(join(team.dir, log), 'utf8').split('\n'))
    .filter((line) => line.includes('"msg":"call"') && line.includes('"member":"carol"'))
    .map((line) => (JSON.parse(line) as { fn: string }).fn);
}

describe.each(services.where)('a read-only member’s agent (T4), %s', (_where, options) => {
  it('is receive-only: shows the team’s versions, lists her edit as not sent, and never calls a write', async () => {
    team = await startTeam(
      { 'flows/ci/build.yml': 'build: 1\n', 'flows/ci/test.yml': 'test: 1\n' },
      await options(),
    );
    const { url } = team.serve;
    const operator = `Admin ${team.serve.tokens.admin}`;
    const alice = team.person('alice');
    alice.env.FLOWSYNC_TOKEN = await memberToken(url, operator, 'alice', 'write');
    const carol = team.person('carol', team.serves.length - 1);
    carol.env.FLOWSYNC_TOKEN = await memberToken(url, operator, 'carol', 'read');
    const sent = await alice.flowsync('sync', alice.root);
    expect(sent.code, sent.stderr).toBe(0);

    agent = startAgentProcess(['start', carol.root], carol.env);
    await agent.waitFor(/Watching 1 repository/, 60_000);
    carol.write('flows/ci/build.yml', 'build: carol\n');
    await eventually(
      async () => {
        const status = await carol.flowsync('status');
        expect(status.stdout).toContain(
          '1 file changed here, not sent: you are a read-only member of this service',
        );
      },
      30_000,
      200,
    );

    // Alice's edit reaches her as newer on the service, as for anyone.
    alice.write('flows/ci/test.yml', 'test: alice\n');
    expect((await alice.flowsync('sync', alice.root)).code).toBe(0);
    await eventually(
      async () => {
        const [repository] = JSON.parse((await carol.flowsync('status', '--json')).stdout) as {
          newer?: { path: string; writtenBy: string | null }[];
          counts: { pending: number };
        }[];
        expect(repository?.newer?.map((file) => file.path)).toEqual(['test.yml']);
        expect(repository?.newer?.[0]?.writtenBy).toMatch(/^alice · /);
        expect(repository?.counts.pending).toBe(1);
      },
      30_000,
      200,
    );

    // Her edit stays hers, the service keeps the team's, and she never called a function that writes.
    expect(carol.read('flows/ci/build.yml')).toBe('build: carol\n');
    expect(team.stored()['flows/ci/build.yml']).toBe('build: 1\n');
    const calls = carolsCalls(team);
    expect(calls.length).toBeGreaterThan(0);
    expect(calls.filter((fn) => SCOPE.get(fn) !== 'read')).toEqual([]);
    expect(agent.output()).not.toMatch(/forbidden|read-only member of this service: svc/);
  }, 180_000);
});
