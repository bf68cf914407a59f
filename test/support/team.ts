import { execFileSync, spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { agentStatusSchema, connectToBridge, type AgentStatus } from '../../src/window/index.ts';
import { NO_KEYCHAIN, userEnv, writeAgentConfig } from './agent-process.ts';
import { FLOWSYNC_BIN, runFlowsync, type CliResult } from './cli.ts';
import { serviceTree } from './repo.ts';
import { startServeProcess, type ServeProcess } from './serve-process.ts';
import { readPostgres, startPostgresCluster, type PostgresCluster } from './postgres.ts';
import { readDatabase } from './service.ts';

/**
 * A team of developers as they live it: one `flowsync serve`, a bare git origin with the files committed, and per
 * developer a HOME of their own and a clone (`<dir>/<name>/app`). The check of the service every minute is shrunk
 * to a second, so that a test waits for a look, not for a minute. `close` stops the service and removes it all.
 */
export interface Team {
  dir: string;
  serve: ServeProcess;
  /** Every `flowsync serve` of the team: one, or several on one Postgres (TeamOptions.postgres). */
  serves: ServeProcess[];
  /** A developer whose agent and commands reach the service through `serves[on]` (default the first). */
  person(name: string, on?: number): Developer;
  /** What the service holds of acme/app, path → content (its database is the ground truth). */
  stored(): Record<string, string>;
  close(): Promise<void>;
}

export interface Developer {
  root: string;
  env: NodeJS.ProcessEnv;
  write(path: string, content: string): void;
  read(path: string): string;
  has(path: string): boolean;
  remove(path: string): void;
  git(...args: string[]): string;
  flowsync(...args: string[]): Promise<CliResult>;
  /** `flowsync` on a terminal of its own (util-linux `script` gives it a pty), `input` typed at it. */
  onTerminal(args: string[], input: string): Promise<{ code: number | null; output: string }>;
  /** The running agent's status and Recent activity, through its bridge (as the window reads them). */
  bridge(): {
    status(): Promise<AgentStatus>;
    activity(): Promise<{ kind: string; message: string | null }[]>;
  };
}

const IDENTITY = {
  GIT_AUTHOR_NAME: 'flowsync test',
  GIT_AUTHOR_EMAIL: 'test@flowsync.invalid',
  GIT_COMMITTER_NAME: 'flowsync test',
  GIT_COMMITTER_EMAIL: 'test@flowsync.invalid',
};

function git(cwd: string, ...args: string[]): string {
  return execFileSync('git', ['-C', cwd, ...args], {
    env: { ...process.env, ...IDENTITY },
    encoding: 'utf8',
  });
}

export interface TeamOptions {
  /** The check of the service every minute, in ms (default 1000: shrunk, so a test waits for a look, not a minute). */
  serviceCheckMs?: number;
  /** The agents hold the live feed (issue 47); default: they look every serviceCheckMs (support/agent-process.ts). */
  live?: boolean;
  /** The service's database is this Postgres one, served by `processes` `flowsync serve`s (default: a SQLite file). */
  postgres?: { url: string; processes: number };
}

/**
 * Where a team's rule is proven (issue 48's Done-when): one serve on a SQLite file, and two serve processes on one
 * Postgres, a cluster made at the first use and removed by `stop` (a file's afterAll). For `describe.each(where)`.
 */
export function teamServices(): { where: [string, () => Promise<TeamOptions>][]; stop(): void } {
  let cluster: PostgresCluster | null = null;
  return {
    where: [
      ['one serve on SQLite', async () => ({})],
      [
        'two serve processes on one Postgres',
        async () => {
          cluster ??= await startPostgresCluster();
          return { postgres: { url: await cluster.createDatabase(), processes: 2 } };
        },
      ],
    ],
    stop: () => cluster?.stop(),
  };
}

export async function startTeam(files: Record<string, string>, options: TeamOptions = {}): Promise<Team> {
  const dir = mkdtempSync(join(tmpdir(), 'flowsync-team-'));
  const seed = join(dir, 'seed');
  mkdirSync(seed);
  for (const [path, content] of Object.entries(files)) {
    mkdirSync(dirname(join(seed, path)), { recursive: true });
    writeFileSync(join(seed, path), content);
  }
  git(seed, 'init', '-q', '-b', 'main');
  git(seed, 'add', '-A');
  git(seed, 'commit', '-q', '-m', 'seed');
  execFileSync('git', ['clone', '-q', '--bare', seed, join(dir, 'origin.git')]);
  const serves: ServeProcess[] = [];
  if (options.postgres) {
    // The first creates the tables and the tokens; the others share them (and print none).
    const first = await startServeProcess(options.postgres.url, join(dir, 'service-0.log'));
    serves.push(first);
    for (let at = 1; at < options.postgres.processes; at++) {
      const next = await startServeProcess(options.postgres.url, join(dir, `service-${at}.log`));
      serves.push({ ...next, tokens: first.tokens });
    }
  } else serves.push(await startServeProcess(join(dir, 'service.db'), join(dir, 'service.log')));
  const serve = serves[0]!;
  const person = (name: string, on = 0): Developer => {
    const root = join(dir, name, 'app');
    mkdirSync(join(dir, name));
    execFileSync('git', ['clone', '-q', join(dir, 'origin.git'), root]);
    const env = {
      ...userEnv(join(dir, name, 'home'), serves[on]!),
      ...NO_KEYCHAIN,
      FLOWSYNC_SERVICE_CHECK_MS: String(options.serviceCheckMs ?? 1000),
      FLOWSYNC_LIVE: options.live ? 'on' : 'off',
    };
    writeAgentConfig(env, [{ path: root, owner: 'acme', name: 'app' }]);
    const bridge = () => {
      const lock = JSON.parse(
        readFileSync(join(dir, name, 'home/.local/share/flowsync/agent.lock'), 'utf8'),
      ) as {
        bridge: string;
      };
      return connectToBridge(lock.bridge);
    };
    return {
      root,
      env,
      write: (path, content) => {
        mkdirSync(dirname(join(root, path)), { recursive: true });
        writeFileSync(join(root, path), content);
      },
      read: (path) => readFileSync(join(root, path), 'utf8'),
      has: (path) => existsSync(join(root, path)),
      remove: (path) => rmSync(join(root, path), { recursive: true, force: true }),
      git: (...args) => git(root, ...args),
      flowsync: (...args) => runFlowsync(args, { env, cwd: root }),
      onTerminal: (args, input) => onTerminal(args, input, env, root),
      bridge: () => ({
        status: async () => agentStatusSchema.parse(await bridge().call('status', {})),
        activity: async () =>
          ((await bridge().call('activity', {})) as { entries: { kind: string; message: string | null }[] })
            .entries,
      }),
    };
  };
  return {
    dir,
    serve,
    serves,
    person,
    stored: () =>
      serviceTree(
        options.postgres ? readPostgres(options.postgres.url) : readDatabase(join(dir, 'service.db')),
        'acme',
        'app',
      ),
    close: async () => {
      for (const each of serves) await each.stop();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

function onTerminal(
  args: string[],
  input: string,
  env: NodeJS.ProcessEnv,
  cwd: string,
): Promise<{ code: number | null; output: string }> {
  const command = [process.execPath, FLOWSYNC_BIN, ...args].map((word) => `'${word}'`).join(' ');
  return new Promise((resolve, reject) => {
    const child = spawn('script', ['-qfec', command, '/dev/null'], {
      env: { ...process.env, ...env },
      cwd,
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    let output = '';
    let typed = false;
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`flowsync ${args.join(' ')} on a terminal did not finish: ${output}`));
    }, 30_000);
    child.stdout.on('data', (chunk: Buffer) => {
      output += chunk.toString('utf8');
      // Typed once it asks: what is typed before the prompt reads would be echoed, not answered.
      if (!typed && /\[y\/N\] /.test(output)) {
        typed = true;
        child.stdin.write(input);
      }
    });
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, output: output.replace(/\r\n/g, '\n') });
    });
  });
}
