import {
  AGENT_API,
  AgentApiError,
  bridgeAnswers,
  createAgentApi,
  type AgentApiInput,
  type AgentApiMethod,
  type AgentApiOutput,
} from '../window/index.ts';
import { findRunningAgent } from '../host/index.ts';
import { Agent, checkRepositoryFolder, configuredRepository, loadConfig } from '../agent/index.ts';
import { describeIssues, printable, toWireIssues } from '../protocol/index.ts';
import { runningAgentBridge } from './agent-bridge.ts';
import { lockForSync } from './running-agent.ts';
import { UsageError } from './usage-error.ts';

/** One call of the agent's API, typed by the contract, whichever agent answers it. */
export type AgentCall = <M extends AgentApiMethod>(
  method: M,
  input: AgentApiInput<M>,
) => Promise<AgentApiOutput<M>>;

/**
 * Runs `use` with the agent's API for these repository folders (their roots, as the agent names them): the
 * running agent's over its window's bridge (it owns the state and the files), else an agent opened for this
 * command alone, holding the agent lock meanwhile. Either way the same implementation answers: what the CLI
 * settles is what the window settles.
 */
export async function withAgentApi<T>(
  folders: readonly string[],
  options: { url?: string },
  use: (call: AgentCall, roots: string[], running: boolean) => Promise<T>,
): Promise<T> {
  const running = await findRunningAgent(bridgeAnswers);
  if (running?.bridge) {
    const bridge = runningAgentBridge({ ...running, bridge: running.bridge });
    const call: AgentCall = async (method, input) =>
      AGENT_API[method].output.parse(await bridge.call(method, input)) as AgentApiOutput<typeof method>;
    const { repositories } = await call('status', {});
    const roots = folders.map((folder) => {
      const root = checkRepositoryFolder(folder);
      if (!repositories.some((repository) => repository.root === root))
        throw new UsageError(
          `${root} is not synced by the running agent (pid ${running.pid}): \`flowsync start ${root}\` adds it.`,
        );
      return root;
    });
    return use(call, roots, true);
  }
  // What it waits for (another `flowsync sync`) is said on stderr: stdout is the command's answer.
  const lock = await lockForSync((line) => process.stderr.write(`${printable(line)}\n`));
  const config = loadConfig();
  const agent = await Agent.open({ config, serviceUrl: options.url });
  try {
    const roots: string[] = [];
    for (const folder of folders) {
      const watched = await agent.addRepository(folder, configuredRepository(config, folder));
      roots.push(watched.identity.root);
    }
    const api = createAgentApi(agent);
    const call: AgentCall = async (method, input) => {
      const parsed = AGENT_API[method].input.safeParse(input);
      if (!parsed.success)
        throw new AgentApiError('invalid_input', describeIssues(toWireIssues(parsed.error.issues), ''));
      return (api[method] as (input: unknown) => Promise<AgentApiOutput<typeof method>>)(parsed.data);
    };
    // `running` false: what this agent queues (a conflict settled with --mine) is sent when an agent runs.
    return await use(call, roots, false);
  } finally {
    await agent.close();
    lock.release();
  }
}
