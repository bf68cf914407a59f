import type { Server } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { performance } from 'node:perf_hooks';
import { loopbackPeerUid, PeerIndex, readSocketTables, socketOwnersKnown } from '../../client/index.ts';
import { tunable } from '../../host/index.ts';

/** What an HTTP server of flowsync's (the service, the window's bridge) allows one connection and all of them. */
export interface ConnectionLimits {
  /** Connections open at once; the next ones are closed as they come (each is a file descriptor). */
  maxConnections: number;
  /** A connection that sends and receives nothing for this long is closed. */
  idleMs: number;
  /** The request's headers must be in within this. */
  headersMs: number;
  /** The whole request, body included, must be in within this. */
  requestMs: number;
  /** A kept-alive connection is closed when no next request starts within this. */
  keepAliveMs: number;
}

/**
 * The limits of a server holding at most `maxConnections`. 19,995 idle connections to the bridge's port took every
 * descriptor the agent had (its limit was 20,000), and 150 uploads that never sent their body were kept open forever:
 * so connections are capped and nothing waits on a caller for long. An 8 MiB body needs 60 s at about 1.1 Mbit/s.
 * `FLOWSYNC_IDLE_TIMEOUT_MS` shrinks every time-out with it (tests set 1 s); the others keep their proportions.
 */
export function connectionLimits(
  maxConnections: number,
  env: NodeJS.ProcessEnv = process.env,
): ConnectionLimits {
  const idleMs = tunable('FLOWSYNC_IDLE_TIMEOUT_MS', 30_000, env);
  return {
    maxConnections,
    idleMs,
    headersMs: Math.ceil(idleMs / 3),
    requestMs: idleMs * 2,
    // 5 s, node's own default (fastify's 72 s kept each quiet client's socket 14 times as long). Never under 1 s:
    // the server announces it in whole seconds, and a client told 0 s would race the close on each reuse.
    keepAliveMs: Math.min(idleMs, Math.max(1000, Math.ceil(idleMs / 6))),
  };
}

/** The same limits as fastify's and node's server options. */
export function serverOptions(limits: ConnectionLimits) {
  return {
    connectionTimeout: limits.idleMs,
    keepAliveTimeout: limits.keepAliveMs,
    requestTimeout: limits.requestMs,
    // Node checks the header and request time-outs on this beat (30 s by default, longer than the time-outs).
    http: {
      headersTimeout: limits.headersMs,
      connectionsCheckingInterval: Math.max(100, Math.ceil(limits.headersMs / 10)),
    },
  };
}

/**
 * A server over its cap reads the kernel's socket table to find strangers' connections at most this many times its
 * last read's cost apart (and at least 20 ms): a read took 100 ms with 23,000 sockets on the machine (the kernel
 * writes the whole table) and 2-5 ms with a few hundred, so a flood, the user's own included (4,000 connections in
 * test/agent/connection-limits.test.ts), gets at most a fifth of the event loop.
 */
const SORT_OUT_SPACING = 5;
const SORT_OUT_MIN_MS = 20;

/**
 * Connections open at once, as a multiple of the cap, before a sorting is made at once, whatever the last one cost:
 * the bound on descriptors. It used to be node's `maxConnections`, which closes each new connection unseen,
 * whoever's it is: another user reopening 600 connections to the window's port had 22 of the user's 42 calls
 * closed so, 1,500 had 45 of 48. A sorting closes every stranger's connection and brings the rest down to the cap,
 * so the next one at this bound comes only after (HELD_WHILE_SORTING - 1) × the cap new connections: one table read
 * per that many, however fast they come.
 */
const HELD_WHILE_SORTING = 4;

/**
 * Caps a server's connections so that other users cannot starve this one's (Linux): over the cap, every connection
 * whose peer is not this user's (another user's, root excepted, or one whose owner the kernel's table does not
 * show) is closed, before any of the user's; only then are the newest of the user's own closed down to the cap, as
 * node's `maxConnections` would. A connection over the cap is not closed as it comes but held until the next
 * sorting (at most 20 ms or five table reads away, or at once at HELD_WHILE_SORTING times the cap): closing the
 * newest at once closed the user's own call whenever it came between two sortings, which under a flood is nearly
 * always. No connection is closed unseen. All strangers at once, so that a flood costs one table read each time it
 * fills the slots again, not one per connection. Elsewhere (no table to ask) it is node's plain cap.
 */
export function capConnections(server: Server, maxConnections: number): void {
  if (!socketOwnersKnown()) {
    server.maxConnections = maxConnections;
    return;
  }
  // In the order they came: the newest last.
  const open = new Set<Socket>();
  let sortedAt = -Infinity;
  let cost = 0;
  let sorting: NodeJS.Timeout | undefined;
  const drop = (held: Socket) => {
    open.delete(held);
    held.destroy();
  };
  const sortOut = () => {
    sorting = undefined;
    if (open.size <= maxConnections) return;
    const now = performance.now();
    sortedAt = now;
    const tables = new PeerIndex(readSocketTables((server.address() as AddressInfo | null)?.port));
    const me = process.getuid!();
    const strangers = [...open].filter((held) => {
      const uid = loopbackPeerUid(held, tables);
      return uid === null || (uid !== me && uid !== 0);
    });
    cost = performance.now() - now;
    strangers.forEach(drop);
    const over = open.size - maxConnections;
    if (over > 0) [...open].slice(-over).forEach(drop);
  };
  server.on('connection', (socket: Socket) => {
    open.add(socket);
    socket.once('close', () => open.delete(socket));
    if (open.size <= maxConnections) return;
    if (open.size > maxConnections * HELD_WHILE_SORTING) {
      clearTimeout(sorting);
      return sortOut();
    }
    if (sorting) return;
    const wait = sortedAt + Math.max(SORT_OUT_MIN_MS, SORT_OUT_SPACING * cost) - performance.now();
    if (wait <= 0) return sortOut();
    sorting = setTimeout(sortOut, wait);
    sorting.unref();
  });
  server.once('close', () => clearTimeout(sorting));
}
