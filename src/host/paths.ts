import envPaths from 'env-paths';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The OS folders flowsync uses (XDG on Linux, ~/Library on macOS, %APPDATA% on Windows). */
function folders() {
  return envPaths('flowsync', { suffix: '' });
}

/** The embedded service's database: the same file `flowsync serve` uses by default, so both are one service. */
export function defaultServiceDbPath(): string {
  return join(folders().data, 'service.db');
}

/** The agent's state: what the service has acknowledged, per repository, flow and file. */
export function defaultStatePath(): string {
  return join(folders().data, 'state.db');
}

export function configFilePath(): string {
  return join(folders().config, 'config.json');
}

/** The agent's own log (JSON lines): what it did, and the details of any incident the window or CLI reports. */
export function defaultAgentLogPath(): string {
  return join(folders().data, 'agent.log');
}

/**
 * Where `flowsync serve` logs when its stderr is a terminal and no --log-file is given: JSON lines between the
 * human ones made the terminal unreadable, and an operator reading a terminal wants the address and the tokens.
 */
export function defaultServeLogPath(): string {
  return join(folders().data, 'serve.log');
}

/** Names the agent that runs, next to the state it owns (see agent-lock.ts). */
export function defaultLockPath(): string {
  return join(folders().data, 'agent.lock');
}

/** The data folder: the agent's state, its lock, its private socket. */
export function defaultDataFolder(): string {
  return folders().data;
}

/**
 * The window's files, Vite's build of renderer/. Found from this module's own place: two folders below the package
 * root in the sources (src/agent/) and in the build (dist/bin/, dist/electron/; scripts/build.mjs keeps it so).
 */
export function rendererDir(): string {
  return fileURLToPath(new URL('../../renderer/dist', import.meta.url));
}

/** A path under the home folder as `~/…`, as a user types it. */
export function tilde(path: string): string {
  const home = homedir();
  return path === home || path.startsWith(`${home}/`) ? `~${path.slice(home.length)}` : path;
}
