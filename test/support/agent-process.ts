import { spawn } from 'node:child_process';
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { ServiceOptions } from '../../src/service/index.ts';
import { FLOWSYNC_BIN } from './cli.ts';
import { eventually, makeRepo, type TestRepo } from './repo.ts';
import { startTestService, type TestService } from './service.ts';

/**
 * No OS keychain reachable (a session bus that does not exist), as on a headless machine: tokens come from the
 * environment, and what would be kept in a keychain cannot be.
 */
export const NO_KEYCHAIN = { DBUS_SESSION_BUS_ADDRESS: 'unix:path=/nonexistent/flowsync-no-bus' };

export interface AgentProcess {
  pid: number;
  output(): string;
  /** Resolves when the output matches (stdout and stderr together). */
  waitFor(pattern: RegExp, timeoutMs?: number): Promise<void>;
  signal(signal: NodeJS.Signals): void;
  /** The exit code, once the process has exited and its output is read (or 1 s after exit, see below). */
  exited: Promise<number | null>;
  /** The exit code; fails after `timeoutMs` with the output and what the process is doing (its state and wait). */
  exitWithin(timeoutMs?: number): Promise<number | null>;
}

/**
 * A long-running `flowsync` command (start) as a user runs it, its output gathered as it comes. `bin` is the
 * checkout's by default; test/package runs the built and the installed ones.
 */
export function startAgentProcess(
  args: string[],
  env: NodeJS.ProcessEnv,
  bin = FLOWSYNC_BIN,
  as?: { uid: number; gid: number },
): AgentProcess {
  return startProgram(process.execPath, [bin, ...args], env, as);
}

/**
 * Any long-running program (an autostart entry's command line), followed as startAgentProcess does; `as` runs it
 * as another Unix user (the tests run as root, which file modes do not stop).
 */
export function startProgram(
  program: string,
  args: string[],
  env: NodeJS.ProcessEnv,
  as?: { uid: number; gid: number },
): AgentProcess {
  const child = spawn(program, args, {
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
    ...as,
  });
  let output = '';
  child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
  child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
  // 'close' waits for the pipes too: a grandchild that kept them open would hold it forever, and a test waiting
  // for it would blame the agent. So: the exit, then the rest of the output for up to 1 s.
  const exited = new Promise<number | null>((resolve) =>
    child.once('exit', (code, signal) => {
      const late = setTimeout(() => {
        output += `\n[exited (${code ?? signal}), but its pipes were still open 1 s later: a child holds them]\n`;
        resolve(code);
      }, 1000);
      child.once('close', () => {
        clearTimeout(late);
        resolve(code);
      });
    }),
  );
  return {
    pid: child.pid!,
    output: () => output,
    waitFor: (pattern, timeoutMs = 20_000) =>
      eventually(() => {
        if (!pattern.test(output)) throw new Error(`no ${pattern} in the output so far:\n${output}`);
      }, timeoutMs).catch((error: Error) => {
        // Read once, when the wait gives up, not on each of its polls.
        error.message += incidentDetails(output);
        throw error;
      }),
    signal: (signal) => child.kill(signal),
    exited,
    exitWithin: async (timeoutMs = 25_000) => {
      let timer: NodeJS.Timeout | undefined;
      const late = new Promise<never>((_, reject) => {
        timer = setTimeout(
          () =>
            reject(
              new Error(
                `still running ${timeoutMs / 1000} s after the signal (${whatItDoes(child.pid!)}):\n${output}`,
              ),
            ),
          timeoutMs,
        );
      });
      try {
        return await Promise.race([exited, late]);
      } finally {
        clearTimeout(timer);
      }
    },
  };
}

/**
 * An agent that met a bug prints only an incident id and its log's path; the test's folder (and so the log) is gone
 * once the test fails, so the failure quotes the log's lines for that incident, stack included.
 */
function incidentDetails(output: string): string {
  const reported = /incident ([0-9a-f]{8})\); the details are in (\S+)\./.exec(output);
  if (!reported) return '';
  const [, incident, log] = reported;
  try {
    const lines = readFileSync(log!, 'utf8')
      .split('\n')
      .filter((line) => line.includes(incident!));
    return `\n${log} on incident ${incident}:\n${lines.join('\n')}`;
  } catch (error) {
    return `\n(${log} could not be read: ${String(error)})`;
  }
}

/** For a process that does not exit: its state and what each of its threads waits in, from /proc (Linux). */
function whatItDoes(pid: number): string {
  try {
    const state = /State:\s+(.*)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? '?';
    const waits = readdirSync(`/proc/${pid}/task`).map((task) => {
      const name = readFileSync(`/proc/${pid}/task/${task}/comm`, 'utf8').trim();
      const wchan = readFileSync(`/proc/${pid}/task/${task}/wchan`, 'utf8').trim() || 'running';
      return `${name}: ${wchan}`;
    });
    return `state ${state}; threads ${waits.join(', ')}`;
  } catch {
    return 'no longer in /proc';
  }
}

/**
 * The environment of a user whose home is `home` (created if missing): flowsync's config and data folders below
 * it, and, given a service, its address and user token (no admin token), as a user would set them. 'embedded' is
 * a user with no service set: the agent runs its embedded one, on a free port, with no token from the
 * environment.
 */
export function userEnv(
  home: string,
  service?: { url: string; tokens: { user: string } } | 'embedded',
): NodeJS.ProcessEnv {
  mkdirSync(home, { recursive: true });
  return {
    HOME: home,
    // The look every 45 s, as the tests written before the live feed expect; a test of the feed turns it on.
    FLOWSYNC_LIVE: 'off',
    XDG_CONFIG_HOME: join(home, '.config'),
    XDG_DATA_HOME: join(home, '.local/share'),
    ...(service === 'embedded'
      ? { FLOWSYNC_URL: '', FLOWSYNC_TOKEN: '', FLOWSYNC_ADMIN_TOKEN: '', FLOWSYNC_EMBEDDED_PORT: '0' }
      : service && {
          FLOWSYNC_URL: service.url,
          FLOWSYNC_TOKEN: service.tokens.user,
          FLOWSYNC_ADMIN_TOKEN: '',
        }),
  };
}

/** Writes the config file of the user of `env` (as `flowsync start` would): these repositories, with their settings. */
export function writeAgentConfig(env: NodeJS.ProcessEnv, repositories: Record<string, unknown>[]): void {
  const folder = join(env.XDG_CONFIG_HOME!, 'flowsync');
  mkdirSync(folder, { recursive: true, mode: 0o700 });
  writeFileSync(join(folder, 'config.json'), `${JSON.stringify({ repositories }, null, 2)}\n`, {
    mode: 0o600,
  });
}

/**
 * The config file of the user of `env` with `root` as its one repository, its deletions never held: for tests of
 * other things that delete many files at once (the held-deletion guard has tests of its own).
 */
export function configWithoutDeletionHold(env: NodeJS.ProcessEnv, root: string): void {
  writeAgentConfig(env, [{ path: root, holdDeletions: false }]);
}

export interface AgentOnService {
  svc: TestService;
  /** The user's repository, made of the files given; removed at close with the home beside it. */
  repo: TestRepo;
  /** The user's home: `home` in the repository's temporary folder. */
  home: string;
  /** What the user's agents run with: userEnv(home, svc), and the fixture's `env` on top. */
  env: NodeJS.ProcessEnv;
  /** flowsync's data folder below home (state.db, agent.lock, agent.log) and its config folder. */
  dataDir: string;
  configDir: string;
  /** A long-running `flowsync <args>` (start, ui) as this user runs it, `extra` on top of `env`. */
  run(args: string[], extra?: NodeJS.ProcessEnv): AgentProcess;
  /** `flowsync start [folders]` as this user runs it. */
  start(...folders: string[]): AgentProcess;
  /** Kills (SIGKILL) every agent started here that still runs, and waits for each to exit. */
  stopAgents(): Promise<void>;
  /** The agents, then the service, then the repository and the home. */
  close(): Promise<void>;
}

/**
 * "An agent process": a user with a HOME of their own, a repository of `files`, a real service whose address and
 * user token are in the user's environment, and the `flowsync` processes the test starts as that user, all
 * cleaned up by one close() (call it from afterEach, or afterAll).
 */
export async function agentOnService(
  files: Record<string, string | Buffer> = {},
  options: { env?: NodeJS.ProcessEnv; service?: Partial<ServiceOptions> } = {},
): Promise<AgentOnService> {
  const svc = await startTestService(options.service);
  const repo = makeRepo(files);
  const home = join(repo.dir, 'home');
  const env = { ...userEnv(home, svc), ...options.env };
  const agents: AgentProcess[] = [];
  const run = (args: string[], extra: NodeJS.ProcessEnv = {}) => {
    const agent = startAgentProcess(args, { ...env, ...extra });
    agents.push(agent);
    return agent;
  };
  const stopAgents = async () => {
    for (const agent of agents.splice(0)) {
      agent.signal('SIGKILL');
      await agent.exited;
    }
  };
  return {
    svc,
    repo,
    home,
    env,
    dataDir: join(home, '.local/share/flowsync'),
    configDir: join(home, '.config/flowsync'),
    run,
    start: (...folders) => run(['start', ...folders]),
    stopAgents,
    async close() {
      await stopAgents();
      await svc.close();
      repo.cleanup();
    },
  };
}
