import type { AgentLockOwner } from '../host/index.ts';
import { connectToBridge, type BridgeClient } from '../window/index.ts';

/**
 * The running agent's bridge, as every command reaches it: through its private socket when the lock names one, else
 * its window's port. A call whose connection dropped is sent again, and said on stderr (stdout is the command's
 * answer); one that still fails is a line of its own (`AgentNotAnswering`), never an incident.
 */
export function runningAgentBridge(owner: AgentLockOwner & { bridge: string }): BridgeClient {
  return connectToBridge(
    { bridge: owner.bridge, socket: owner.socket },
    {
      onRetry: (attempt, of) =>
        process.stderr.write(
          `flowsync: the agent (pid ${owner.pid}) dropped the connection; trying again (${attempt} of ${of})…\n`,
        ),
    },
  );
}

/**
 * Said by `start` and `doctor` where the agent has no private socket though the OS has them: the data folder's path
 * is too long for one, and neither `$XDG_RUNTIME_DIR` nor /tmp could take a folder for it.
 */
export const NO_PRIVATE_SOCKET =
  "flowsync: the agent's private socket could not be made (its path would be over 100 bytes, in the data folder, " +
  '$XDG_RUNTIME_DIR and /tmp alike): commands reach the agent over its window’s port, which stays open to other users ' +
  'of this machine (they cannot use it, but they can crowd it)';
