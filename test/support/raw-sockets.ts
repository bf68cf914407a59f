import { readdirSync, readFileSync } from 'node:fs';
import { connect, type Socket } from 'node:net';

/** A TCP connection as an attacker holds it: what the server answered, and whether the server closed it. */
export interface HeldSocket {
  socket: Socket;
  answer(): string;
  closed(): boolean;
}

/**
 * Opens a connection to 127.0.0.1:`port` and writes `data` (nothing: an idle connection). Errors (a reset when the
 * server closes a connection we still write to, a refusal past its cap) only count as closed.
 */
export function hold(port: number, data?: string | Buffer): Promise<HeldSocket> {
  return new Promise((resolve) => {
    let answer = '';
    let closed = false;
    const socket = connect({ host: '127.0.0.1', port });
    socket.on('data', (chunk: Buffer) => (answer += chunk.toString('latin1')));
    socket.on('error', () => {});
    socket.on('close', () => {
      closed = true;
      resolve(held);
    });
    const held: HeldSocket = { socket, answer: () => answer, closed: () => closed };
    socket.once('connect', () => {
      if (data !== undefined) socket.write(data);
      resolve(held);
    });
  });
}

/** Opens `count` connections, `batch` at a time (so the test's own process never has thousands half-open). */
export async function holdMany(
  count: number,
  port: number,
  data?: string | Buffer,
  batch = 200,
): Promise<HeldSocket[]> {
  const sockets: HeldSocket[] = [];
  while (sockets.length < count) {
    const n = Math.min(batch, count - sockets.length);
    sockets.push(...(await Promise.all(Array.from({ length: n }, () => hold(port, data)))));
  }
  return sockets;
}

/** How many file descriptors a process has open (Linux). */
export function openDescriptors(pid: number): number {
  return readdirSync(`/proc/${pid}/fd`).length;
}

/** A process's resident memory in bytes (Linux, /proc/<pid>/status VmRSS). */
export function residentBytes(pid: number): number {
  const kb = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1];
  return Number(kb) * 1024;
}
