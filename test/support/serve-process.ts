import { spawn } from 'node:child_process';
import { openSync } from 'node:fs';
import { FLOWSYNC_BIN } from './cli.ts';

export interface ServeProcess {
  url: string;
  /** Everything the command printed on stdout so far. */
  stdout(): string;
  tokens: { user: string; admin: string };
  /** Sends a signal to the process: SIGSTOP freezes it mid-call, SIGCONT lets it go on. */
  signal(signal: NodeJS.Signals): void;
  /** The TCP port it listens on. */
  port: number;
  /** The process id (bench/peer.ts reads its memory and CPU from /proc). */
  pid: number;
  stop(): Promise<void>;
}

/**
 * Starts `flowsync serve` on a free port with a fresh database and reads its address and tokens from stdout.
 * `bin` is the build by default (support/cli.ts); test/package runs the installed one. `env` is added to the test's own.
 */
export function startServeProcess(
  dbPath: string,
  logPath: string,
  extraArgs: string[] = [],
  bin = FLOWSYNC_BIN,
  env: NodeJS.ProcessEnv = {},
): Promise<ServeProcess> {
  const child = spawn(process.execPath, [bin, 'serve', '--port', '0', '--db', dbPath, ...extraArgs], {
    stdio: ['ignore', 'pipe', openSync(logPath, 'a')],
    env: { ...process.env, ...env },
  });
  const stdout = child.stdout;
  if (!stdout) throw new Error('flowsync serve was spawned without a stdout pipe');
  return new Promise((resolve, reject) => {
    let out = '';
    // One that does not start in time is stopped, or it would outlive the test (and load the runs after it).
    const timer = setTimeout(() => {
      child.removeAllListeners('exit');
      child.kill('SIGKILL');
      reject(new Error(`flowsync serve did not start within 20 s: ${out}`));
    }, 20_000);
    child.once('exit', (code) => reject(new Error(`flowsync serve exited with ${code}: ${out}`)));
    stdout.on('data', (chunk: Buffer) => {
      out += chunk.toString('utf8');
      const url = /listening on (\S+)/.exec(out)?.[1];
      const user = /user token:\s+(\S+)/.exec(out)?.[1] ?? '';
      const admin = /admin token:\s+(\S+)/.exec(out)?.[1] ?? '';
      // Tokens are printed only on a database's first start; a restart prints none.
      if (!url || !out.includes('Press Ctrl-C')) return;
      clearTimeout(timer);
      child.removeAllListeners('exit');
      resolve({
        url,
        stdout: () => out,
        tokens: { user, admin },
        signal: (signal) => child.kill(signal),
        port: Number(new URL(url).port),
        pid: child.pid!,
        stop: () =>
          new Promise((done) => {
            if (child.exitCode !== null || child.signalCode !== null) return done();
            // A server that does not stop within 10 s is a bug the test should see, not a hung run.
            const killer = setTimeout(() => child.kill('SIGKILL'), 10_000);
            child.kill('SIGCONT'); // a frozen server cannot stop
            child.once('exit', () => {
              clearTimeout(killer);
              done();
            });
            child.kill('SIGTERM');
          }),
      });
    });
  });
}
