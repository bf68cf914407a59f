import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { AgentApiError, connectToBridge, type BridgeClient } from '../../src/window/index.ts';
import {
  NO_KEYCHAIN,
  agentOnService,
  type AgentOnService,
  type AgentProcess,
} from '../support/agent-process.ts';
import { VIEWER, deliver, registerApiKey, seedViewerTasks } from '../support/tracker.ts';

/**
 * Issue 25: "Open tasks assigned to you" was empty, because the agent registered the personal API key to the OS
 * user name (`root`), which no tracker uses; and a key in FLOWSYNC_API_KEY that nobody registered got the
 * service's protocol words ("register it with add_activity (type key-created)"). Now the key is registered to the
 * tracker user with git's user.email (global), or to the one the user picks, at the agent's start when it is an
 * operator; and the window says who "you" are. The real agent (`flowsync ui`), on a real service, no keychain:
 * the key comes from the environment, as the README says for a headless machine.
 */
const SECRET = 'lin_api_ada_from_environment_0042';
const BOB = { id: 'u-bob', name: 'Bob Stone', email: 'bob@example.com' };

let user: AgentOnService;
let agent: AgentProcess;

interface You {
  user: { id: string; name: string | null; email: string | null } | null;
  gitEmail: string | null;
  choices: { id: string }[];
  problem: string | null;
}

/** The user's own git config (~/.gitconfig in their home), as `git config --global user.email` writes it. */
function gitEmail(email: string): void {
  execFileSync('git', ['config', '--file', join(user.home, '.gitconfig'), 'user.email', email]);
}

/** A tracker that knows Ada (12 open tasks of hers) and Bob; the key is registered to nobody. */
async function seedTracker(): Promise<void> {
  await seedViewerTasks(user.svc, 'lin_api_someone_elses_key_0001', 12);
  await deliver(user.svc, { action: 'create', type: 'User', data: BOB });
}

async function startUi(env: NodeJS.ProcessEnv): Promise<BridgeClient> {
  agent = user.run(['ui'], { ...NO_KEYCHAIN, FLOWSYNC_API_KEY: SECRET, ...env });
  await agent.waitFor(/Window: (\S+)/, 40_000);
  const lock = readFileSync(join(user.dataDir, 'agent.lock'), 'utf8');
  return connectToBridge((JSON.parse(lock) as { bridge: string }).bridge);
}

const you = async (bridge: BridgeClient) => (await bridge.call('whoYouAre', {})) as You;
const ownerOfKey = () =>
  user.svc.read(`SELECT user_id FROM api_keys WHERE prefix_4 = 'lin_' AND suffix_4 = '0042'`);

beforeEach(async () => {
  user = await agentOnService({ 'flows/hello/main.yaml': 'hello\n' });
  await seedTracker();
});
afterEach(async () => {
  agent?.signal('SIGINT');
  await agent?.exited;
  await user.close();
});

describe('who you are in the tracker', () => {
  it("registers FLOWSYNC_API_KEY at start to the tracker user with git's email, and lists that user's tasks", async () => {
    gitEmail('ADA@example.com');
    const bridge = await startUi({ FLOWSYNC_ADMIN_TOKEN: user.svc.tokens.admin });
    await agent.waitFor(/You are Ada Lovelace \(ada@example\.com\) in the tracker/);
    expect(agent.output()).toContain('FLOWSYNC_API_KEY');
    expect(ownerOfKey()).toEqual([{ user_id: VIEWER.id }]);

    expect(await you(bridge)).toMatchObject({ user: VIEWER, gitEmail: 'ADA@example.com', problem: null });
    const tasks = (await bridge.call('myTasks', {})) as { viewer: unknown; nodes: { identifier: string }[] };
    expect(tasks.viewer).toEqual(VIEWER);
    expect(tasks.nodes.map((task) => task.identifier)).toContain('ENG-101');
    expect(tasks.nodes).toHaveLength(12);
  });

  it("moves a key registered to the OS user name (root) to its owner, once, and leaves a tracker user's alone", async () => {
    await registerApiKey(user.svc, SECRET, 'root');
    gitEmail('ada@example.com');
    await startUi({ FLOWSYNC_ADMIN_TOKEN: user.svc.tokens.admin });
    await agent.waitFor(/You are Ada Lovelace/);
    expect(ownerOfKey()).toEqual([{ user_id: VIEWER.id }]);
    agent.signal('SIGINT');
    await agent.exited;

    // Bob's key, by his own choice: a restart with Ada's git email does not take it from him.
    await registerApiKey(user.svc, SECRET, BOB.id);
    await startUi({ FLOWSYNC_ADMIN_TOKEN: user.svc.tokens.admin });
    await agent.waitFor(/You are Bob Stone \(bob@example\.com\) in the tracker\./);
    expect(ownerOfKey()).toEqual([{ user_id: BOB.id }]);
  });

  it('lets the user pick who they are when nobody has their git email', async () => {
    gitEmail('ada@laptop.local');
    const bridge = await startUi({ FLOWSYNC_ADMIN_TOKEN: user.svc.tokens.admin });
    await agent.waitFor(
      /no tracker user has your git email \(ada@laptop\.local\): pick who you are in Settings/,
    );
    // Not registered to a stand-in the tracker does not know (issue 42): to nobody until the user picks.
    expect(ownerOfKey()).toEqual([]);

    const before = await you(bridge);
    expect(before.user).toBeNull();
    // Settings shows this line above the list to pick from: "in Settings" sent the user where they were.
    expect(before.problem).toContain('pick who you are below');
    expect(before.problem).not.toContain('in Settings');
    expect(before.choices.map((choice) => choice.id)).toEqual([VIEWER.id, BOB.id]);

    const after = (await bridge.call('setKeyOwner', { userId: VIEWER.id })) as You;
    expect(after).toMatchObject({ user: VIEWER, problem: null });
    expect(ownerOfKey()).toEqual([{ user_id: VIEWER.id }]);
    const tasks = (await bridge.call('myTasks', {})) as { nodes: unknown[] };
    expect(tasks.nodes).toHaveLength(12);
  });

  it("says what to do in the user's words when the agent may not register the key (no admin token)", async () => {
    gitEmail('ada@example.com');
    const bridge = await startUi({});
    await agent.waitFor(/does not know your personal API key yet: sign in with an admin token/);
    const refused = await bridge.call('myTasks', {}).then(
      () => null,
      (error: unknown) => error,
    );
    expect(refused).toBeInstanceOf(AgentApiError);
    const { message } = refused as AgentApiError;
    expect(message).toContain('sign in with an admin token');
    expect(message).not.toMatch(/add_activity|key-created/);
    const settings = await you(bridge);
    expect(settings.user).toBeNull();
    expect(settings.problem).toContain('admin token');
    expect(settings.choices).toEqual([]);
  });

  it('registers FLOWSYNC_API_KEY at start with the embedded service, whose admin token the agent always holds', async () => {
    gitEmail('ada@example.com');
    const embedded = {
      FLOWSYNC_URL: '',
      FLOWSYNC_TOKEN: '',
      FLOWSYNC_ADMIN_TOKEN: '',
      FLOWSYNC_EMBEDDED_PORT: '0',
    };
    const bridge = await startUi(embedded);
    // A fresh embedded service knows no tracker user yet: nobody to register the key to, and it says so.
    await agent.waitFor(/the tracker has told \S+ about no user yet/);
    const refused = await bridge.call('searchTasks', { query: 'login' }).then(
      () => null,
      (error: unknown) => error,
    );
    expect((refused as AgentApiError).message).toContain('does not know your personal API key yet');
    expect((await you(bridge)).problem).toContain('does not know your personal API key yet');
  });

  it("finds the user by the repository's own user.email, not only the global one (issue 42)", async () => {
    gitEmail('ada@laptop.local');
    execFileSync('git', ['-C', user.repo.root, 'init', '-q']);
    execFileSync('git', ['-C', user.repo.root, 'config', 'user.email', 'Ada@Example.com']);
    agent = user.run(['start', user.repo.root], {
      ...NO_KEYCHAIN,
      FLOWSYNC_API_KEY: SECRET,
      FLOWSYNC_ADMIN_TOKEN: user.svc.tokens.admin,
    });
    await agent.waitFor(/You are Ada Lovelace \(ada@example\.com\) in the tracker/, 40_000);
    expect(ownerOfKey()).toEqual([{ user_id: VIEWER.id }]);
  });

  it('never registers a key to an id the tracker does not have (the OS user name) when git has no email (issue 42)', async () => {
    const bridge = await startUi({ FLOWSYNC_ADMIN_TOKEN: user.svc.tokens.admin });
    await agent.waitFor(/git has no user\.email to find you by/);
    expect(ownerOfKey()).toEqual([]);
    const after = (await bridge.call('setKeyOwner', { userId: BOB.id })) as You;
    expect(after).toMatchObject({ user: BOB, problem: null });
    expect(ownerOfKey()).toEqual([{ user_id: BOB.id }]);
  });
});
