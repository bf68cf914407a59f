import { inSyncOf, plural } from '../protocol/index.ts';
import { setTimeout as sleep } from 'node:timers/promises';
import {
  AgentApiError,
  AgentNotAnswering,
  agentStatusSchema,
  bridgeAnswers,
  repositoryViewSchema,
} from '../window/index.ts';
import { AgentLock, claimAgentLock, type AgentLockOwner } from '../host/index.ts';
import { checkRepositoryFolder } from '../agent/index.ts';
import { UsageError } from './usage-error.ts';
import { runningAgentBridge } from './agent-bridge.ts';
import { showWindow } from './window-address.ts';
import { where } from './where.ts';

type Out = (line: string) => void;

/** How often a command waiting for the lock looks again; a start or a sync finishes in seconds. */
const POLL_MS = 200;

/** What `start` asks of the folders it hands over: sync them from this checkout (`source`), under a new name. */
interface HandOverOptions {
  source?: boolean;
  rename?: boolean;
}

/**
 * Takes the agent lock for `start` or `ui`. When another agent holds it, hands it these folders over its window's
 * bridge, prints its window address and returns null: one agent per machine user. An agent that is still
 * starting is waited for (its window comes up after its first sync), and so is a `flowsync sync`.
 */
export async function becomeAgentOrHandOver(
  command: 'start' | 'ui',
  folders: string[],
  out: Out,
  open = false,
  options: HandOverOptions = {},
): Promise<AgentLock | null> {
  const claim = await claimLock(command, (owner) => owner.bridge !== null, out);
  if (claim instanceof AgentLock) return claim;
  await handOver(claim, folders, out, open, options);
  return null;
}

/**
 * Takes the lock for a one-shot `flowsync sync` (waiting for another one to finish). A running agent already
 * sends every change of its repositories as it happens and owns the state file, so a sync beside it is refused
 * in one line that says what to do instead.
 */
export async function lockForSync(out: Out): Promise<AgentLock> {
  const claim = await claimLock('sync', (owner) => owner.command !== 'sync', out);
  if (claim instanceof AgentLock) return claim;
  throw new UsageError(
    `An agent is already running (pid ${claim.pid}) and keeps its repositories in sync: \`flowsync status\` ` +
      'shows where they stand and `flowsync start <folder>` hands it another folder; stop it to run `flowsync sync`.',
  );
}

async function claimLock(
  command: AgentLockOwner['command'],
  enough: (owner: AgentLockOwner) => boolean,
  out: Out,
): Promise<AgentLock | AgentLockOwner> {
  let told = false;
  for (;;) {
    const claim = await claimAgentLock(command, bridgeAnswers);
    if (claim instanceof AgentLock || enough(claim)) return claim;
    if (!told) {
      out(
        claim.command === 'sync'
          ? `flowsync: \`flowsync sync\` is running (pid ${claim.pid}); waiting for it to finish…`
          : `flowsync: an agent is starting (pid ${claim.pid}); waiting for its window…`,
      );
      told = true;
    }
    await sleep(POLL_MS);
  }
}

async function handOver(
  owner: AgentLockOwner,
  folders: string[],
  out: Out,
  open: boolean,
  { source, rename }: HandOverOptions,
): Promise<void> {
  const address = owner.bridge!;
  // Checked here too, so that a wrong folder gets the same one line as when no agent runs.
  const roots = folders.map(checkRepositoryFolder);
  out(
    `flowsync: an agent is already running (pid ${owner.pid})` +
      (roots.length > 0 ? `; handing it ${roots.join(', ')}` : '') +
      '.',
  );
  const bridge = runningAgentBridge({ ...owner, bridge: address });
  const notAnswering = (error: unknown) => {
    if (error instanceof AgentApiError && !(error instanceof AgentNotAnswering)) return error;
    return new AgentApiError(
      'unavailable',
      `The running agent (pid ${owner.pid}) does not answer: ${(error as Error).message} ` +
        'If it is stuck, stop it and start again.',
    );
  };
  // The running agent's service may not be the one this command would use (--url is its own choice): said here.
  let service = '';
  for (const root of roots) {
    let reply: unknown;
    try {
      service ||= agentStatusSchema.parse(await bridge.call('status', {})).serviceUrl;
      reply = await bridge.call('addRepository', {
        path: root,
        ...(source && { source }),
        ...(rename && { rename }),
      });
    } catch (error) {
      throw notAnswering(error);
    }
    const view = repositoryViewSchema.parse(reply);
    const { counts } = view;
    // Another checkout is its source: listed by the running agent, not synced; the line says how to switch.
    if (view.syncedFrom !== null) {
      out(`${where(view, view.branch, root)}: ${view.message ?? `synced from ${view.syncedFrom}`}`);
      continue;
    }
    out(
      `${where(view, view.branch, root)}: ${plural(counts.flows, 'flow')}, ${plural(counts.files, 'file')}, ` +
        `${inSyncOf(view).line}, synced by the running agent with ${service}`,
    );
    if (view.rename) out(view.rename.message);
  }
  // The lock holds the agent token; what is shown is the address alone, or a launch address on a terminal.
  const shown = `${new URL(address).origin}/`;
  out(
    await showWindow(
      shown,
      () => bridge.launchUrl().catch((error) => Promise.reject(notAnswering(error))),
      open,
    ),
  );
}
