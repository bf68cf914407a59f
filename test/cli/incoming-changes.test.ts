import { afterEach, describe, expect, it } from 'vitest';
import { startAgentProcess, type AgentProcess } from '../support/agent-process.ts';
import { eventually } from '../support/repo.ts';
import { startTeam, type Team } from '../support/team.ts';

/**
 * Issue 46, the team's changes coming in, as Ada and Bob live them (one `flowsync serve`, a clone and a running
 * agent each, real git): taking many of them asks first and lists them, then says what it did, in the terminal and
 * in Recent activity; an edit made while a teammate's version waits is a conflict at once, said as one; and "not in
 * this checkout" follows the disk, cleared within a look once the files are back.
 */
let team: Team | null = null;
const agents: AgentProcess[] = [];

afterEach(async () => {
  for (const agent of agents.splice(0)) {
    agent.signal('SIGINT');
    await agent.exitWithin(10_000);
  }
  await team?.close();
  team = null;
});

/** flows/ci (2 files) and flows/old (12 files): deleting flows/old is more than the deletion guard lets through. */
function files(): Record<string, string> {
  const old = Object.fromEntries(
    Array.from({ length: 12 }, (_, i) => [`flows/old/f${String(i).padStart(2, '0')}.yml`, `old: ${i}\n`]),
  );
  return { 'flows/ci/build.yml': 'build: 1\n', 'flows/ci/test.yml': 'test: 1\n', ...old };
}

function start(args: string[], env: NodeJS.ProcessEnv): AgentProcess {
  const agent = startAgentProcess(args, env);
  agents.push(agent);
  return agent;
}

describe("the team's changes coming in", () => {
  it('taking 12 deletions and an edit asks first and lists them, takes none without a yes, then says what it did', async () => {
    team = await startTeam(files());
    const ada = team.person('ada');
    const bob = team.person('bob');
    const agent = start(['start', ada.root], ada.env);
    await agent.waitFor(/Watching 1 repository/, 60_000);
    expect((await bob.flowsync('sync', bob.root)).code).toBe(0);
    // Bob deletes flows/old (held on his side: more than the guard lets through) and confirms; and edits build.yml.
    bob.remove('flows/old');
    bob.write('flows/ci/build.yml', 'build: bob\n');
    const sent = await bob.flowsync('sync', '--yes', bob.root);
    expect(sent.code, sent.stdout + sent.stderr).toBe(0);
    expect(Object.keys(team.stored())).toEqual(['flows/ci/build.yml', 'flows/ci/test.yml']);
    await agent.waitFor(/13 files newer on the service/, 30_000);

    // No terminal, no --yes: it lists what it would delete and overwrite, and takes none of it (exit 4).
    const listed = await ada.flowsync('resolve', '--newer', ada.root);
    expect(listed.code, listed.stderr).toBe(4);
    expect(listed.stdout).toContain(
      '13 files newer on the service would be taken: 12 deleted here, 1 replaced',
    );
    expect(listed.stdout).toContain('  - flows/old/f00.yml (deleted on the service)');
    expect(listed.stdout).toContain('  ~ flows/ci/build.yml (changed on the service by ');
    expect(listed.stdout).toContain(
      `nothing taken: \`flowsync resolve --newer --yes ${ada.root}\` takes them`,
    );
    expect(ada.has('flows/old/f00.yml')).toBe(true);
    expect(ada.read('flows/ci/build.yml')).toBe('build: 1\n');

    // On a terminal it asks, listing them; a yes takes them.
    const asked = await ada.onTerminal(['resolve', '--newer', ada.root], 'y\n');
    expect(asked.code, asked.output).toBe(0);
    expect(asked.output).toContain('  - flows/old/f11.yml (deleted on the service)');
    expect(asked.output).toMatch(/Take these 13 files from the service\? \[y\/N\] /);
    expect(asked.output).toContain('flows/old/f00.yml: deleted here, as on the service');
    expect(asked.output).toContain("flows/ci/build.yml: the service's newer version is on disk");
    expect(ada.has('flows/old/f00.yml')).toBe(false);
    expect(ada.read('flows/ci/build.yml')).toBe('build: bob\n');
    expect(ada.read('flows/ci/test.yml')).toBe('test: 1\n');
    // Nothing sent by taking: the service holds what Bob left.
    expect(team.stored()).toEqual({ 'flows/ci/build.yml': 'build: bob\n', 'flows/ci/test.yml': 'test: 1\n' });

    // Said in the running agent's terminal, and in its Recent activity (what the window lists).
    await agent.waitFor(/13 files taken from the service: 12 deleted here, 1 replaced/, 10_000);
    const activity = await ada.bridge().activity();
    expect(activity.map((entry) => `${entry.kind} ${entry.message}`)).toContain(
      'taken 13 files taken from the service: 12 deleted here, 1 replaced',
    );
  }, 180_000);

  it('an edit made while a teammate’s version waits is a conflict at once: in `conflicts`, the window and the terminal', async () => {
    team = await startTeam(files());
    const ada = team.person('ada');
    const bob = team.person('bob');
    const agent = start(['start', ada.root], ada.env);
    await agent.waitFor(/Watching 1 repository/, 60_000);
    expect((await bob.flowsync('sync', bob.root)).code).toBe(0);
    bob.write('flows/ci/build.yml', 'build: bob\n');
    expect((await bob.flowsync('sync', bob.root)).code).toBe(0);
    await agent.waitFor(/1 file newer on the service/, 30_000);

    // Ada appends a line while Bob's version waits: a conflict now, said by her agent by itself.
    ada.write('flows/ci/build.yml', 'build: 1\nmore: ada\n');
    await agent.waitFor(
      /flows\/ci\/build\.yml: changed here and on the service: a conflict; `flowsync conflicts`/,
      30_000,
    );
    const listed = await ada.flowsync('conflicts', ada.root);
    expect(listed.code, listed.stdout).toBe(4);
    expect(listed.stdout).toMatch(/flows\/ci\/build\.yml: changed on the service by \S+.*; you changed it/);
    expect(listed.stdout).not.toContain('unchanged here');
    expect(listed.stdout).not.toContain('newer on the service');
    // The window's rows read the same side: what is on disk, not what was sent.
    const shown = (await ada.bridge().status()).repositories[0]!;
    expect(shown.counts.conflicts).toBe(1);
    expect(shown.counts.behind).toBe(0);
    // Taking the newer files takes nothing of hers: her edit is not behind, it is in conflict.
    const taken = await ada.flowsync('resolve', '--newer', ada.root);
    expect(taken.stdout).toContain('Nothing is newer on the service.');
    expect(ada.read('flows/ci/build.yml')).toBe('build: 1\nmore: ada\n');
    expect(team.stored()['flows/ci/build.yml']).toBe('build: bob\n');
  }, 180_000);

  it('"not in this checkout" is cleared within a look once a branch switch brought the files back', async () => {
    team = await startTeam(files());
    const ada = team.person('ada');
    const bob = team.person('bob');
    expect((await ada.flowsync('sync', ada.root)).code).toBe(0);
    const agent = start(['start', bob.root], bob.env);
    await agent.waitFor(/Watching 1 repository/, 60_000);
    // Bob's branch removes flows/old; he confirms the deletions: the service has none of it.
    bob.git('switch', '-q', '-c', 'cleanup');
    bob.git('rm', '-rq', 'flows/old');
    bob.git('commit', '-qm', 'cleanup');
    // Held for Bob either way, sent on his word: as git's change set (issue 46: Ada writes to this service), named
    // by what the reflog says when the batch is read (the switch, or the `git rm` before the commit), or by the
    // deletion guard when the batch is read before git's reflog says anything.
    await agent.waitFor(/cleanup: 12 deleted, waiting for you|12 deletions held/, 30_000);
    const confirmed = await bob.flowsync('sync', '--yes', bob.root);
    expect(confirmed.code, confirmed.stdout + confirmed.stderr).toBe(0);
    await eventually(() => expect(Object.keys(team!.stored())).toHaveLength(2), 20_000);

    // Ada takes that, then writes the files back by hand: the service has them again, Bob's branch has not.
    await ada.flowsync('sync', ada.root);
    const taken = await ada.flowsync('resolve', '--newer', '--yes', ada.root);
    expect(taken.code, taken.stdout + taken.stderr).toBe(0);
    expect(ada.has('flows/old/f00.yml')).toBe(false);
    for (const [path, content] of Object.entries(files())) ada.write(path, content);
    expect((await ada.flowsync('sync', ada.root)).code).toBe(0);
    expect(Object.keys(team.stored())).toHaveLength(14);
    await eventually(async () => {
      const status = await bob.flowsync('status');
      expect(status.stdout).toContain('12 files on the service are not in this checkout');
    }, 30_000);

    // Bob goes back to main: every file is on disk again, as the service has it. Within a look it is said no more.
    bob.git('switch', '-q', 'main');
    await eventually(async () => {
      const status = await bob.flowsync('status');
      expect(status.stdout).not.toContain('not in this checkout');
      expect(status.code, status.stdout).toBe(0);
    }, 30_000);
    const listed = await bob.flowsync('resolve', '--not-in-checkout', bob.root);
    expect(listed.stdout).toContain('every file on the service is in this checkout');
    expect(Object.keys(team.stored())).toHaveLength(14);
  }, 180_000);
});
