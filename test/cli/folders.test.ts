import { mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { agentOnService, userEnv, writeAgentConfig } from '../support/agent-process.ts';
import { runFlowsync } from '../support/cli.ts';
import { eventually, serviceTree } from '../support/repo.ts';
import { startTestService, type TestService } from '../support/service.ts';

/**
 * Folders that are no repository, as a user gives them (issue 25, item 3): `/` and the home folder are refused
 * in one line, and a folder without `flows/` says it has nothing to sync rather than "up to date".
 */
let svc: TestService;
/** The user's home; `notes` (no flows/) and `app` (pipelines/) are folders in it. */
let home: string;
let env: NodeJS.ProcessEnv;

beforeEach(async () => {
  svc = await startTestService();
  home = join(realpathSync(mkdtempSync(join(tmpdir(), 'flowsync-folders-'))), 'home');
  mkdirSync(join(home, 'notes'), { recursive: true });
  writeFileSync(join(home, 'notes', 'todo.md'), 'buy milk\n');
  mkdirSync(join(home, 'app/pipelines/deploy'), { recursive: true });
  writeFileSync(join(home, 'app/pipelines/deploy/main.yaml'), 'deploy\n');
  env = userEnv(home, svc);
});
afterEach(async () => {
  await svc.close();
  rmSync(dirname(home), { recursive: true, force: true });
});

const NO_STACK = /\n\s+at /;

describe('a folder too wide to be a repository', () => {
  it.each([
    ['sync', '/', '/ is the whole disk, not a repository'],
    ['sync', '~', '~ is your home folder, not a repository'],
    ['start', '~/', '~/ is your home folder, not a repository'],
    ['start', '/', '/ is the whole disk, not a repository'],
  ])('flowsync %s %s is refused in one line', async (command, folder, says) => {
    const run = await runFlowsync([command, folder], { env, cwd: home });
    expect(run.code, run.stdout + run.stderr).toBe(2);
    expect(run.stderr).toContain(`${says}: give the folder of one repository, e.g. ~/code/app.`);
    expect(run.stderr).not.toMatch(NO_STACK);
    expect(svc.read('SELECT owner, name FROM repos')).toEqual([]);
  });

  it('the folder that holds the home folder is refused too', async () => {
    const above = dirname(home);
    const run = await runFlowsync(['sync', above], { env });
    expect(run.code, run.stderr).toBe(2);
    expect(run.stderr).toContain(`${above} holds your home folder, not a repository`);
  });

  it('a config file that lists / leaves it out with the entry named, and everything else works', async () => {
    writeAgentConfig(env, [{ path: join(home, 'app'), flowRoots: ['pipelines'] }, { path: '/' }]);
    const run = await runFlowsync(['status'], { env });
    // Refusing the whole file stopped the agent, the window and every command (the review of issue 25).
    expect(run.code, run.stderr).toBe(0);
    expect(run.stderr).toContain(
      'repositories.1.path: / is the whole disk, not a repository; it is left out',
    );
    expect(run.stderr).not.toMatch(NO_STACK);
    expect(run.stdout).not.toMatch(/^\/ {2}/m);
  });

  it('a config file whose flow folder climbs out of the repository is refused', async () => {
    writeAgentConfig(env, [{ path: join(home, 'app'), flowRoots: ['../notes'] }]);
    const run = await runFlowsync(['sync', join(home, 'app')], { env });
    expect(run.code, run.stdout).toBe(2);
    expect(run.stderr).toContain('the flow folder "../notes" has a .. segment');
    expect(run.stderr).not.toMatch(NO_STACK);
  });
});

describe('a folder without flows/', () => {
  const NOTHING = 'no flows/ folder in ~/notes: nothing to sync; set its flow folders in Settings';

  it('flowsync sync says it has nothing to sync, not "up to date", and exits 2', async () => {
    const run = await runFlowsync(['sync', '~/notes'], { env });
    expect(run.stdout).toContain(`local/notes: ${NOTHING}`);
    expect(run.stdout).not.toContain('up to date');
    expect(run.code, run.stderr).toBe(2);
    // Said once: not again as a warning.
    expect(run.stderr).not.toContain('nothing to sync');
  });

  it('flowsync status says so too, with the fix', async () => {
    writeAgentConfig(env, [{ path: join(home, 'notes') }]);
    await runFlowsync(['sync', '~/notes'], { env });
    const status = await runFlowsync(['status'], { env });
    expect(status.code, status.stderr).toBe(0);
    expect(status.stdout).toContain(`  ${NOTHING}`);
  });

  it('with its flow folders set in the config, it syncs them', async () => {
    writeAgentConfig(env, [{ path: join(home, 'app'), flowRoots: ['pipelines'] }]);
    const run = await runFlowsync(['sync', '~/app'], { env });
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).not.toContain('nothing to sync');
    expect(serviceTree(svc.read, 'local', 'app')).toEqual({ 'pipelines/deploy/main.yaml': 'deploy\n' });
  });
});

describe('flowsync start of a folder without flows/', () => {
  it('keeps it, says it has nothing to sync, and syncs a flows/ made later without a restart', async () => {
    const user = await agentOnService({ 'notes.md': 'buy milk\n' });
    try {
      const agent = user.start(user.repo.root);
      await agent.waitFor(/Watching 1 repository/, 60_000);
      expect(agent.output()).toContain(
        `local/repo: no flows/ folder in ${user.repo.root}: nothing to sync; set its flow folders in Settings\n`,
      );
      expect(agent.output()).not.toContain('in sync');
      user.repo.write('flows/ci/build.yml', 'build: 1\n');
      await eventually(() =>
        expect(serviceTree(user.svc.read, 'local', 'repo')).toEqual({ 'flows/ci/build.yml': 'build: 1\n' }),
      );
    } finally {
      await user.close();
    }
  });
});
