import { readFileSync } from 'node:fs';

/**
 * Bytes that reached the kernel for a listening port but that its process has not read yet (Linux, IPv4), from
 * `/proc/net/tcp`: once a frozen (SIGSTOP) server has unread bytes, a request is in flight to it.
 */
export function unreadBytesAt(port: number): number {
  let unread = 0;
  for (const line of readFileSync('/proc/net/tcp', 'utf8').split('\n').slice(1)) {
    const fields = line.trim().split(/\s+/);
    if (fields.length < 5) continue;
    const localPort = parseInt(fields[1]!.split(':')[1]!, 16);
    const rxQueue = parseInt(fields[4]!.split(':')[1]!, 16);
    if (localPort === port) unread += rxQueue;
  }
  return unread;
}
