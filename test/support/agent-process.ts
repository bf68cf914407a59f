import { spawn } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { FLOWSYNC_BIN } from './cli.ts';
import { eventually } from './repo.ts';

export interface AgentProcess {
  pid: number;
  output(): string;
  /** Resolves when the output matches (stdout and stderr together). */
  waitFor(pattern: RegExp, timeoutMs?: number): Promise<void>;
  signal(signal: NodeJS.Signals): void;
  exited: Promise<number | null>;
}

/**
 * A long-running `flowsync` command (start) as a user runs it, its output gathered as it comes. `bin` is the
 * checkout's by default; test/package runs the built and the installed ones.
 */
export function startAgentProcess(args: string[], env: NodeJS.ProcessEnv, bin = FLOWSYNC_BIN): AgentProcess {
  const child = spawn(process.execPath, [bin, ...args], {
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
  child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
  const exited = new Promise<number | null>((resolve) => child.on('close', (code) => resolve(code)));
  return {
    pid: child.pid!,
    output: () => output,
    waitFor: (pattern, timeoutMs = 20_000) =>
      eventually(() => {
        if (!pattern.test(output)) throw new Error(`no ${pattern} in the output so far:\n${output}`);
      }, timeoutMs),
    signal: (signal) => child.kill(signal),
    exited,
  };
}

/**
 * The environment of a user whose home is `home` (created if missing): flowsync's config and data folders below
 * it, and, given a service, its address and user token (no admin token), as a user would set them.
 */
export function userEnv(
  home: string,
  service?: { url: string; tokens: { user: string } },
): NodeJS.ProcessEnv {
  mkdirSync(home, { recursive: true });
  return {
    HOME: home,
    XDG_CONFIG_HOME: join(home, '.config'),
    XDG_DATA_HOME: join(home, '.local/share'),
    ...(service && {
      FLOWSYNC_URL: service.url,
      FLOWSYNC_TOKEN: service.tokens.user,
      FLOWSYNC_ADMIN_TOKEN: '',
    }),
  };
}
