import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * The `flowsync` the tests run: the build (dist/bin/flowsync.js), made from the sources at the start of each run
 * (build-setup.ts), as the npm package and the desktop app run it. Not bin/flowsync.js, which in a checkout compiles
 * every source file with tsx at each start, its cache off: 0.95 s of CPU for `flowsync status --help` against 0.12 s,
 * and a test run starts hundreds of them (three CLI test files took 172 s that way, 55 s on the build).
 */
export const FLOWSYNC_BIN = fileURLToPath(new URL('../../dist/bin/flowsync.js', import.meta.url));
/** bin/flowsync.js, the command as a checkout runs it (the sources, through tsx): for the tests of that launcher. */
export const CHECKOUT_BIN = fileURLToPath(new URL('../../bin/flowsync.js', import.meta.url));
/** For `node --import`: tsx without its disk cache, which another local user could fill (see the script). */
export const REGISTER_TSX = fileURLToPath(new URL('../../scripts/register-tsx.mjs', import.meta.url));

export interface CliResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs the real `flowsync` command, as a user would type it, with optional stdin and environment. */
export function runFlowsync(
  args: string[],
  options: {
    stdin?: string;
    env?: NodeJS.ProcessEnv;
    /** The folder it is run from, for relative paths (default: the test process's). */
    cwd?: string;
    timeoutMs?: number;
    /** Another Unix user to run it as (the tests run as root). */
    as?: { uid: number; gid: number };
  } = {},
): Promise<CliResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [FLOWSYNC_BIN, ...args], {
      env: { ...process.env, ...options.env },
      cwd: options.cwd,
      stdio: ['pipe', 'pipe', 'pipe'],
      ...options.as,
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString('utf8')));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`flowsync ${args.join(' ')} did not finish: ${stdout}${stderr}`));
    }, options.timeoutMs ?? 20_000);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
    // A command that refuses its arguments exits without reading its input, from the build within 0.1 s, and may
    // be gone before this write reaches the pipe: EPIPE is then no failure of the command's (closed-pipe.test.ts).
    child.stdin.on('error', (error: NodeJS.ErrnoException) => {
      if (error.code !== 'EPIPE') reject(error);
    });
    child.stdin.end(options.stdin ?? '');
  });
}

/**
 * The packages whose CommonJS modules a `flowsync` run loaded (fastify, better-sqlite3, keytar, undici and pino are
 * CommonJS), read from require.cache as the process exits.
 */
export function packagesLoadedBy(bin: string, args: string[], env: NodeJS.ProcessEnv): Set<string> {
  const dir = mkdtempSync(join(tmpdir(), 'flowsync-probe-'));
  try {
    const probe = join(dir, 'probe.cjs');
    writeFileSync(
      probe,
      "process.on('exit', () => process.stderr.write('\\nLOADED ' + JSON.stringify(Object.keys(require.cache)) + '\\n'));\n",
    );
    const run = spawnSync(process.execPath, ['--require', probe, bin, ...args], {
      encoding: 'utf8',
      env: { ...process.env, ...env },
    });
    const line = run.stderr.split('\n').find((l) => l.startsWith('LOADED '));
    if (run.status !== 0 || !line) throw new Error(`flowsync ${args.join(' ')} failed: ${run.stderr}`);
    const files = JSON.parse(line.slice('LOADED '.length)) as string[];
    return new Set(files.flatMap((file) => /node_modules\/((?:@[^/]+\/)?[^/]+)\//.exec(file)?.[1] ?? []));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
