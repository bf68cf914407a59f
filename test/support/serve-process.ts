import { spawn } from 'node:child_process';
import { openSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

export interface ServeProcess {
  url: string;
  tokens: { user: string; admin: string };
  stop(): Promise<void>;
}

const BIN = fileURLToPath(new URL('../bin/flowsync.js', import.meta.url));

/** Starts `flowsync serve` on a free port with a fresh database and reads its address and tokens from stdout. */
export function startServeProcess(dbPath: string, logPath: string): Promise<ServeProcess> {
  const child = spawn(process.execPath, [BIN, 'serve', '--port', '0', '--db', dbPath], {
    stdio: ['ignore', 'pipe', openSync(logPath, 'a')],
  });
  return new Promise((resolve, reject) => {
    let out = '';
    const timer = setTimeout(() => reject(new Error(`flowsync serve did not start: ${out}`)), 20_000);
    child.once('exit', (code) => reject(new Error(`flowsync serve exited with ${code}: ${out}`)));
    child.stdout.on('data', (chunk: Buffer) => {
      out += chunk.toString('utf8');
      const url = /listening on (\S+)/.exec(out)?.[1];
      const user = /user token:\s+(\S+)/.exec(out)?.[1];
      const admin = /admin token:\s+(\S+)/.exec(out)?.[1];
      if (!url || !user || !admin) return;
      clearTimeout(timer);
      child.removeAllListeners('exit');
      resolve({
        url,
        tokens: { user, admin },
        stop: () =>
          new Promise((done) => {
            child.once('exit', () => done());
            child.kill('SIGTERM');
          }),
      });
    });
  });
}
