import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { AgentApiError, connectToBridge, type BridgeClient } from '../../src/window/index.ts';
import {
  NO_KEYCHAIN,
  agentOnService,
  startProgram,
  userEnv,
  type AgentOnService,
  type AgentProcess,
} from '../support/agent-process.ts';
import { FLOWSYNC_BIN } from '../support/cli.ts';
import type { TestRepo } from '../support/repo.ts';
import type { TestService } from '../support/service.ts';

/**
 * A headless machine with no Secret Service: the agent runs on tokens from the environment. Its window must say
 * where each secret comes from, say which variable to set for what is missing, and register nothing it cannot
 * keep. And a user's mistakes in the window get the CLI's one-line answers, not "something went wrong".
 */
let user: AgentOnService;
let svc: TestService;
let repo: TestRepo;
let agent: AgentProcess;
let home: string;

async function startUi(env: NodeJS.ProcessEnv): Promise<BridgeClient> {
  agent = user.run(['ui'], env);
  await agent.waitFor(/Window: (\S+)/, 40_000);
  // The agent's own address (with the agent token) is in its lock, as `flowsync ui --open` reads it.
  const lock = readFileSync(join(home, '.local/share/flowsync/agent.lock'), 'utf8');
  return connectToBridge((JSON.parse(lock) as { bridge: string }).bridge);
}

async function refusal(promise: Promise<unknown>): Promise<AgentApiError> {
  const error = await promise.then(
    () => null,
    (thrown: unknown) => thrown,
  );
  expect(error).toBeInstanceOf(AgentApiError);
  return error as AgentApiError;
}

beforeEach(async () => {
  user = await agentOnService({ 'flows/hello/main.yaml': 'hello\n' });
  ({ svc, repo, home } = user);
});
afterEach(async () => {
  // Also the agent under script(1), which the fixture did not start.
  agent?.signal('SIGINT');
  await agent?.exited;
  await user.close();
});

describe('no keychain, tokens in the environment', () => {
  it('reports each secret by its source, and says which variable to set for the key', async () => {
    const bridge = await startUi({
      ...NO_KEYCHAIN,
      FLOWSYNC_ADMIN_TOKEN: svc.tokens.admin,
      FLOWSYNC_API_KEY: '',
    });
    const settings = (await bridge.call('getSettings', {})) as {
      signedIn: { user: boolean; admin: boolean };
      sources: Record<string, string>;
    };
    expect(settings.signedIn).toEqual({ user: true, admin: true });
    expect(settings.sources).toEqual({ user: 'environment', admin: 'environment', apiKey: 'unavailable' });

    const search = await refusal(bridge.call('searchTasks', { query: 'login' }));
    expect(search.message).toContain('FLOWSYNC_API_KEY');

    // The key cannot be kept: it must not be registered with the service either.
    const save = await refusal(bridge.call('setApiKey', { secret: 'lin_api_headless_key_0042' }));
    expect(save.message).toContain('FLOWSYNC_API_KEY');
    expect(svc.read('SELECT * FROM api_keys')).toEqual([]);
  });

  it('prints the embedded service tokens once, with how to use them, on a terminal only', async () => {
    const env = { ...userEnv(home, 'embedded'), ...NO_KEYCHAIN };
    // stdout a pipe (a log, the journal behind an autostart entry): where the tokens are, not the tokens.
    agent = user.run(['start', repo.root], env);
    await agent.waitFor(/Watching 1 repository/, 40_000);
    expect(agent.output()).toContain(
      "No OS keychain: the embedded service's tokens live in memory for this run only",
    );
    expect(agent.output()).not.toMatch(/fsu_|fsa_|token=/);
    agent.signal('SIGINT');
    expect(await agent.exitWithin()).toBe(0);

    // On a terminal (script(1) gives the agent one), the person in front of it gets them, and the window's address.
    agent = startProgram(
      'script',
      ['-qfec', `'${process.execPath}' '${FLOWSYNC_BIN}' start '${repo.root}'`, '/dev/null'],
      env,
    );
    await agent.waitFor(
      /export FLOWSYNC_URL=(\S+) FLOWSYNC_TOKEN=(fsu_\S+) FLOWSYNC_ADMIN_TOKEN=(fsa_\S+)/,
      40_000,
    );
    await agent.waitFor(/Window: http:\/\/[a-z0-9]+\.localhost:\d+\/#token=[\w-]+/);
    // The window comes before the first sync; Ctrl-C before the agent watches ends it at once (130).
    await agent.waitFor(/Watching 1 repository/, 40_000);
    // script(1) does not pass Ctrl-C on from a pipe: the agent itself is stopped, then script ends with it.
    const lock = readFileSync(join(home, '.local/share/flowsync/agent.lock'), 'utf8');
    process.kill((JSON.parse(lock) as { pid: number }).pid, 'SIGINT');
    expect(await agent.exitWithin()).toBe(0);
  });
});

describe('a user\u2019s mistakes in the window', () => {
  it('answers a folder that is missing, a file, or under ~ as the CLI does', async () => {
    const bridge = await startUi({ FLOWSYNC_ADMIN_TOKEN: svc.tokens.admin });
    const missing = await refusal(bridge.call('addRepository', { path: join(repo.dir, 'nowhere') }));
    expect(missing.code).toBe('invalid_input');
    expect(missing.message).toBe(
      `${join(repo.dir, 'nowhere')} does not exist: give the folder of a repository.`,
    );

    writeFileSync(join(repo.dir, 'a-file'), 'x');
    const file = await refusal(bridge.call('addRepository', { path: join(repo.dir, 'a-file') }));
    expect(file.code).toBe('invalid_input');
    expect(file.message).toContain('is not a folder');

    // `~` is the agent's home, as a shell would expand it.
    mkdirSync(join(home, 'code/app/flows/hi'), { recursive: true });
    writeFileSync(join(home, 'code/app/flows/hi/main.yaml'), 'hi\n');
    const added = (await bridge.call('addRepository', { path: '~/code/app' })) as { root: string };
    expect(added.root).toBe(join(home, 'code/app'));
    const config = JSON.parse(readFileSync(join(home, '.config/flowsync/config.json'), 'utf8')) as {
      repositories: { path: string }[];
    };
    expect(config.repositories.map((r) => r.path)).toEqual([join(home, 'code/app')]);
  });
});
