import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterEach, describe, expect, it } from 'vitest';
import { startAgentProcess, userEnv, type AgentProcess } from '../support/agent-process.ts';
import { runFlowsync } from '../support/cli.ts';
import { memberToken } from '../support/members.ts';
import { eventually } from '../support/repo.ts';
import { startTeam, type Team } from '../support/team.ts';

/**
 * A removed member's agent (issue 48, T3, the agent's side): a real `flowsync serve`, bob a member with his own
 * token and his own running agent; the operator runs `flowsync service member remove bob`, then bob edits three
 * files. His agent says one line (the service's reason, and `flowsync login --url … --invite`), shows "signed
 * out" (status, and the window's status through the agent's bridge), keeps the three edits pending, and stops
 * calling: no retry loop, a call a minute at most (to notice a new sign-in). Before, it said "unauthorized …
 * retrying in 1 s" and called again 1, 2, 4, 8… s apart.
 */
let team: Team | null = null;
let agent: AgentProcess | null = null;

afterEach(async () => {
  agent?.signal('SIGINT');
  await agent?.exitWithin(15_000);
  agent = null;
  await team?.close();
  team = null;
});

/** The service's log lines of calls refused for their credential (401): only bob's token is refused here. */
function refusedCalls(team: Team): number {
  return readFileSync(join(team.dir, 'service.log'), 'utf8')
    .split('\n')
    .filter((line) => line.includes('"msg":"call"') && line.includes('"status":401')).length;
}

describe('a removed member’s agent (T3)', () => {
  it.each([
    { live: false, feed: 'looks every second', more: 0 },
    // The held call of the live feed admitted before the removal ends, and the next is refused: one call, then a
    // minute's wait.
    { live: true, feed: 'the live feed held', more: 1 },
  ])(
    'says one line, shows signed out, keeps its edits pending, and stops calling ($feed)',
    async ({ live, more }) => {
      team = await startTeam(
        {
          'flows/ci/build.yml': 'build: 1\n',
          'flows/ci/test.yml': 'test: 1\n',
          'flows/cd/ship.yml': 'ship: 1\n',
        },
        { live },
      );
      const { url } = team.serve;
      const bobToken = await memberToken(url, `Admin ${team.serve.tokens.admin}`, 'bob', 'write');
      const bob = team.person('bob');
      bob.env.FLOWSYNC_TOKEN = bobToken;
      agent = startAgentProcess(['start', bob.root], bob.env);
      await agent.waitFor(/Watching 1 repository/, 60_000);
      await eventually(async () => expect((await bob.flowsync('status')).code).toBe(0), 30_000, 200);

      const operator = {
        ...userEnv(join(team.dir, 'dana')),
        FLOWSYNC_URL: '',
        FLOWSYNC_TOKEN: '',
        FLOWSYNC_ADMIN_TOKEN: team.serve.tokens.admin,
      };
      const removed = await runFlowsync(['service', 'member', 'remove', 'bob', '--url', url], {
        env: operator,
      });
      expect(removed.code, removed.stderr).toBe(0);

      bob.write('flows/ci/build.yml', 'build: 2\n');
      bob.write('flows/ci/test.yml', 'test: 2\n');
      bob.write('flows/cd/ship.yml', 'ship: 2\n');
      const line = new RegExp(
        `signed out, \\d files? pending: ${url} no longer takes your token: you were removed from this service at \\S+\\. ` +
          `Nothing is sent, and your edits wait here: ask an operator for a new invite, then ` +
          `\`flowsync login --url ${url} --invite\`\\.`,
      );
      await agent.waitFor(line, 30_000);
      const refusedThen = refusedCalls(team);
      expect(refusedThen).toBeGreaterThan(0);

      // Its outbox is kept: the three edits are pending, and said as signed out, never offline.
      await eventually(
        async () => {
          const status = await bob.flowsync('status');
          expect(status.stdout).toContain(`now: signed out: ${url} no longer takes your token`);
          expect(status.stdout).toContain('3 pending');
          expect(status.stdout).not.toMatch(/offline/);
        },
        15_000,
        200,
      );
      const [repository] = JSON.parse((await bob.flowsync('status', '--json')).stdout) as {
        counts: { pending: number };
        phase: string;
      }[];
      expect(repository).toMatchObject({ counts: { pending: 3 }, phase: 'unauthorized' });
      // The window (the agent's bridge, as the window reads it): its status says the same line, and its Recent
      // activity says "signed out" once, never offline.
      const seen = await bob.bridge().status();
      expect(JSON.stringify(seen)).toContain(
        `${url} no longer takes your token: you were removed from this service`,
      );
      const activity = await bob.bridge().activity();
      expect(activity.filter((entry) => entry.kind === 'signed-out')).toHaveLength(1);
      expect(activity.map((entry) => entry.kind)).not.toContain('offline');

      // No retry loop: the edits and the looks meanwhile make no call (the next is a minute after the refusal).
      // Counted from here: `flowsync status` above asks the service who it is itself (its first line), one
      // refused call of its own each time it runs.
      const refusedBefore = refusedCalls(team);
      await sleep(8_000);
      expect(refusedCalls(team)).toBeLessThanOrEqual(refusedBefore + more);
      // Said once, whatever happened meanwhile.
      expect(agent.output().match(/no longer takes your token/g)).toHaveLength(1);
      expect(agent.output()).not.toMatch(/offline|retrying in/);
    },
    180_000,
  );
});
