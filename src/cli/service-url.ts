import { Option } from 'commander';
import { statSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { DEFAULT_SERVICE_URL, configuredServiceUrl, loadConfig } from '../agent/index.ts';
import { defaultServiceDbPath, findRunningAgent, inPrivateFolder } from '../host/index.ts';
import { embeddedSecrets, normalizeServiceUrl } from '../secrets/index.ts';

export function urlOption(): Option {
  return new Option(
    '--url <url>',
    "the service's address (default: $FLOWSYNC_URL, else the config file's serviceUrl, else the running agent's " +
      `embedded service, else ${DEFAULT_SERVICE_URL})`,
  );
}

/** The service a command talks to, and the name its secrets are filed under in the keychain. */
export interface ServiceTarget {
  url: string;
  /** The URL itself, or `embedded:<database>` for the embedded service, whose tokens no address reads back. */
  secrets: string;
  /**
   * The embedded service's Unix socket (in the 0700 data folder, or a 0700 folder of its own), when it has one: calls
   * go through it, so another user holding every slot of its port does not cut this user off.
   */
  socketPath?: string;
}

/**
 * The service a command talks to: the agent's precedence (configuredServiceUrl: --url, then $FLOWSYNC_URL, then
 * the config file, an empty one falling through); else the embedded service of the running agent, at the address
 * its lock gives (its port is whichever it got: 7420 may belong to another local user, who would receive every
 * token sent there); else `flowsync serve`'s default address, with the tokens signed in for that address only.
 */
export async function resolveService(flag: string | undefined): Promise<ServiceTarget> {
  const given = configuredServiceUrl(flag, loadConfig);
  if (given) {
    const url = normalizeServiceUrl(given);
    return { url, secrets: url };
  }
  // The window's bridge client, loaded when asked: every command's --help loads this module (for --url), and the
  // window's module brought fastify, undici and SQLite with it.
  const running = await findRunningAgent(async (agent) =>
    (await import('../window/index.ts')).bridgeAnswers(agent),
  );
  // The lock and the database are in one data folder: the running agent's embedded service is this database's. Its
  // socket is the one the lock names (an older lock names none: then the data folder's), in a folder only this user
  // enters.
  if (running?.service) {
    const dbPath = defaultServiceDbPath();
    const socketPath = running.serviceSocket ?? join(dirname(dbPath), 'service.sock');
    const socket =
      (statSync(socketPath, { throwIfNoEntry: false })?.isSocket() ?? false) && inPrivateFolder(socketPath);
    return { url: running.service, secrets: embeddedSecrets(dbPath), ...(socket && { socketPath }) };
  }
  return { url: DEFAULT_SERVICE_URL, secrets: DEFAULT_SERVICE_URL };
}
