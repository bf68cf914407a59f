import { afterEach, describe, expect, it } from 'vitest';
import { agentOnService, type AgentOnService } from '../support/agent-process.ts';
import { runFlowsync } from '../support/cli.ts';
import { twoBranches } from '../support/git.ts';
import { eventually, serviceTree } from '../support/repo.ts';

/**
 * Issue 24, always say where: each line of `flowsync start`, each `status` entry and each window card names the
 * repository and the branch of its checkout, and a branch switch is one line for the round that followed, not a
 * line per file. Before, nothing named a branch, and a switch that removed 120 files printed only the round's
 * counts under the repository's name.
 */
let user: AgentOnService | null = null;

afterEach(async () => {
  await user?.close();
  user = null;
});

/** acme/app on main with 130 files; feat-x changes 1 of them, adds 1 and deletes 120 (more than held without asking). */
function files(): Record<string, string> {
  const tree: Record<string, string> = { 'flows/ci/build.yml': 'build: 1\n' };
  for (let n = 0; n < 120; n++) tree[`flows/old/step-${n}.yml`] = `step: ${n}\n`;
  for (let n = 0; n < 9; n++) tree[`flows/keep/k-${n}.yml`] = `keep: ${n}\n`;
  return tree;
}

describe('where a line is about', () => {
  it('names the branch on every line, says a branch switch in one line, and the window and status show it', async () => {
    user = await agentOnService(files());
    const { repo, svc, env } = user;
    const git = twoBranches(repo.root, () => {
      repo.write('flows/ci/build.yml', 'build: feat\n');
      repo.write('flows/ci/new.yml', 'new: 1\n');
      repo.remove('flows/old');
    });
    git('remote', 'add', 'origin', 'git@github.com:acme/app.git');
    const stored = () => serviceTree(svc.read, 'acme', 'app');

    const agent = user.start(repo.root);
    await agent.waitFor(/Watching 1 repository/, 60_000);
    expect(agent.output()).toContain(`acme/app (main, ${repo.root}): 3 flows, 130 files, in sync`);
    repo.write('flows/ci/build.yml', 'build: 2\n');
    await agent.waitFor(/\d\d:\d\d:\d\d acme\/app \(main\): flows\/ci\/build\.yml updated in \d+ ms\n/);
    git('commit', '-q', '-am', 'build 2');

    // The switch: one line for what the round that followed sent and held, and no line per file.
    const before = agent.output().length;
    git('checkout', '-q', 'other');
    await agent.waitFor(
      /acme\/app: branch main → other: \d+ changed, \d+ deletions? held \(flowsync sync --yes\)\n/,
    );
    await eventually(() => expect(stored()['flows/ci/new.yml']).toBe('new: 1\n'));
    expect(Object.keys(stored())).toHaveLength(131);
    // (A round that began before git moved HEAD, which it writes last, would be a line of `(main)`: not this one's.)
    const after = agent.output().slice(before);
    expect(after).not.toMatch(/acme\/app \(other\): (flows\/ci\/\S+ (created|updated)|\d+ flows?, \+)/);
    expect(after.match(/branch main → other/g)).toHaveLength(1);

    // A later edit on the new branch is a line of its own again, naming it.
    repo.write('flows/ci/new.yml', 'new: 2\n');
    await agent.waitFor(/\d\d:\d\d:\d\d acme\/app \(other\): flows\/ci\/new\.yml updated in \d+ ms\n/);

    // `status`, in text and JSON, and the window's status name the branch (a detached HEAD as such).
    git('checkout', '-q', '--detach');
    const text = await runFlowsync(['status'], { env });
    expect(text.stdout).toMatch(/acme\/app \(detached at [0-9a-f]{7}\) {2}/);
    const json = JSON.parse((await runFlowsync(['status', '--json'], { env })).stdout) as {
      branch: string;
    }[];
    expect(json[0]!.branch).toMatch(/^detached at [0-9a-f]{7}$/);
    // Handed to the running agent, the folder's line is the window's view of it (the window's status contract).
    const running = await runFlowsync(['start', repo.root], { env });
    expect(running.stdout).toMatch(
      new RegExp(
        `acme/app \\(detached at [0-9a-f]{7}, ${repo.root}\\): .* synced by the running agent with ${svc.url}`,
      ),
    );
    agent.signal('SIGINT');
    expect(await agent.exitWithin()).toBe(0);
  });
});
