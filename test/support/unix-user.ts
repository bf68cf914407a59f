import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';

/** Another local account on this machine, real to the kernel: the attacker of the multi-user tests. */
export interface UnixUser {
  name: string;
  uid: number;
  /** Runs a command as this user to its end (throws on a non-zero exit) and returns its stdout. */
  run(program: string, args: string[]): string;
  /** Starts a long-running command as this user; stopped by `remove`. */
  start(program: string, args: string[]): ChildProcess;
  /** Stops what `start` started (by its pid) and deletes the account. */
  remove(): Promise<void>;
}

/** Creates a throw-away user with no home folder and no login shell (the tests run as root). */
export function createUnixUser(): UnixUser {
  const name = `fsatk${randomBytes(4).toString('hex')}`;
  execFileSync('useradd', ['--no-create-home', '--shell', '/usr/sbin/nologin', name]);
  const uid = Number(execFileSync('id', ['-u', name], { encoding: 'utf8' }).trim());
  const started: ChildProcess[] = [];
  // runuser keeps our environment unless told otherwise; the attacker gets only a PATH.
  const as = (program: string, args: string[]) => [
    '-u',
    name,
    '--',
    'env',
    '-i',
    `PATH=${process.env.PATH}`,
    program,
    ...args,
  ];
  return {
    name,
    uid,
    run: (program, args) => execFileSync('runuser', as(program, args), { encoding: 'utf8' }),
    start: (program, args) => {
      const child = spawn('runuser', as(program, args), { stdio: ['ignore', 'pipe', 'pipe'] });
      started.push(child);
      return child;
    },
    remove: async () => {
      for (const child of started) {
        if (child.exitCode !== null || child.signalCode !== null) continue;
        const exited = new Promise((resolve) => child.once('exit', resolve));
        child.kill('SIGTERM');
        await exited;
      }
      execFileSync('userdel', [name]);
    },
  };
}
