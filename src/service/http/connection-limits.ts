import type { Server } from 'node:http';
import type { Socket } from 'node:net';
import { performance } from 'node:perf_hooks';
import { loopbackPeerUid, PeerIndex, readSocketTables, socketOwnersKnown } from '../../client/index.ts';
import { tunable } from '../../host/index.ts';

/** What an HTTP server of flowsync's (the service, the window's bridge) allows one connection and all of them. */
export interface ConnectionLimits {
  /** Connections held at once; the next ones are closed as they come (each is a file descriptor). */
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
 * descriptor the agent had (its limit was 20,000), and 150 uploads that never sent their body were held forever:
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
 * A server at its cap reads the kernel's socket table to find strangers' connections at most this many times its
 * last read's cost apart (and at least 20 ms): a read took 100 ms with 23,000 sockets on the machine (the kernel
 * writes the whole table) and 2-5 ms with a few hundred, so a flood, the user's own included (4,000 connections in
 * test/agent/connection-limits.test.ts), gets at most a fifth of the event loop. In between, the newest connection
 * is the one closed. The sooner strangers are sorted out again, the sooner a connection of the user's gets a slot.
 */
const SORT_OUT_SPACING = 5;
const SORT_OUT_MIN_MS = 20;

/**
 * Caps a server's connections so that other users cannot starve this one's (Linux): at the cap, every connection
 * whose peer is not this user's (another user's, root excepted, or one whose owner the kernel's table does not
 * show) is closed at once, before any of the user's; only when there is none is the newest closed, as node's
 * `maxConnections` would. All of them at once, so that a flood costs one table read each time it fills the slots
 * again, not one per connection. Elsewhere (no table to ask) it is node's plain cap.
 */
export function capConnections(server: Server, maxConnections: number): void {
  if (!socketOwnersKnown()) {
    server.maxConnections = maxConnections;
    return;
  }
  // A bound on descriptors even between two sortings: twice the cap.
  server.maxConnections = maxConnections * 2;
  const open = new Set<Socket>();
  let sortedAt = -Infinity;
  let cost = 0;
  server.on('connection', (socket: Socket) => {
    open.add(socket);
    socket.once('close', () => open.delete(socket));
    if (open.size <= maxConnections) return;
    const drop = (held: Socket) => {
      open.delete(held);
      held.destroy();
    };
    const now = performance.now();
    if (now - sortedAt < Math.max(SORT_OUT_MIN_MS, SORT_OUT_SPACING * cost)) return drop(socket);
    sortedAt = now;
    const tables = new PeerIndex(readSocketTables(socket.localPort));
    const me = process.getuid!();
    const strangers = [...open].filter((held) => {
      const uid = loopbackPeerUid(held, tables);
      return uid === null || (uid !== me && uid !== 0);
    });
    cost = performance.now() - now;
    if (strangers.length === 0) return drop(socket);
    strangers.forEach(drop);
  });
}
