import { afterEach, describe, expect, it } from 'vitest';
import { agentOnService, writeAgentConfig, type AgentOnService } from '../support/agent-process.ts';
import { runFlowsync } from '../support/cli.ts';
import { eventually } from '../support/repo.ts';

/**
 * Issue 42 point 6: an invalid hand edit of `.flowsync/repo-config.json` showed only on the window's card. The
 * agent's lines, `status` (and its exit code) said nothing, and the card said it in zod's words ("Invalid input:
 * expected string, received undefined"). Now each says which field and what it should be, and it waits (exit 4).
 */
let user: AgentOnService | null = null;
afterEach(async () => {
  await user?.close();
  user = null;
});

const INVALID = '{"editor": 3, "background_jobs": [{"name": "dev", "command": "npm run dev"}]}\n';
const SAID =
  '.flowsync/repo-config.json: background_jobs.0.description: is missing (text is expected); ' +
  'editor: must be text (it is a number)';

describe('an invalid .flowsync/repo-config.json', () => {
  it('is said by the running agent, by status (exit 4), in words, and again once fixed', async () => {
    user = await agentOnService({ 'flows/ci/build.yml': 'build: 1\n' });
    const { repo, env } = user;
    const agent = user.start(repo.root);
    await agent.waitFor(/Watching 1 repository/);
    repo.write('.flowsync/repo-config.json', INVALID);
    await agent.waitFor(/editor: must be text \(it is a number\)/);
    expect(agent.output()).toContain(SAID);
    expect(agent.output()).not.toMatch(/Invalid input|received undefined|nonoptional/);

    const status = await runFlowsync(['status'], { env });
    expect(status.code, status.stderr).toBe(4);
    expect(status.stdout).toContain('  waiting for you: repo-config.json not valid\n');
    expect(status.stdout).toContain(`  ${SAID}\n`);
    expect(status.stdout).not.toMatch(/Invalid input|received undefined/);

    repo.write('.flowsync/repo-config.json', '{"editor": "code"}\n');
    await agent.waitFor(/repo-config\.json is valid again/);
    await eventually(async () => expect((await runFlowsync(['status'], { env })).code).toBe(0));
  }, 60_000);

  it('is said by status without a running agent too, read from the folder', async () => {
    user = await agentOnService({ 'flows/ci/build.yml': 'build: 1\n' });
    const { repo, env } = user;
    writeAgentConfig(env, [{ path: repo.root }]);
    expect((await runFlowsync(['sync', repo.root], { env })).code).toBe(0);
    repo.write('.flowsync/repo-config.json', INVALID);
    const status = await runFlowsync(['status'], { env });
    expect(status.code, status.stderr).toBe(4);
    expect(status.stdout).toContain(`  ${SAID}\n`);
  }, 60_000);
});
