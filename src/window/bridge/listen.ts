import type { FastifyInstance } from 'fastify';
import { chmodSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { serverOptions, type ConnectionLimits } from '../../service/index.ts';

/** Browsers try `::1` before 127.0.0.1 for a `localhost` name: the bridge holds the port on both (listenOnLoopback). */
const LOOPBACKS = ['::1', '127.0.0.1'] as const;

/** A plain HTTP server with the limits fastify's has (serverOptions), whose requests `serve` routes. */
function sideServer(limits: ConnectionLimits, serve: (server: Server) => void): Server {
  const { http, ...timeouts } = serverOptions(limits);
  const server = createServer({
    ...http,
    requestTimeout: timeouts.requestTimeout,
    keepAliveTimeout: timeouts.keepAliveTimeout,
  });
  server.timeout = timeouts.connectionTimeout;
  serve(server);
  return server;
}

function listen(server: Server, where: { host: string; port: number } | { path: string }): Promise<void> {
  return new Promise((listening, failed) => {
    server.once('error', failed);
    server.listen(where, () => {
      server.off('error', failed);
      listening();
    });
  });
}

/**
 * Listens on one port of both loopback addresses: fastify's server on 127.0.0.1, another on ::1. A browser opens a
 * `localhost` name on ::1 first, so a port the bridge had on 127.0.0.1 alone could be another user's on ::1, and
 * they would serve this run's window to the user's browser. A free port is found on ::1 and then taken on
 * 127.0.0.1 (another one when that is taken); a port the user chose must be free on both. Where the machine has no
 * ::1, nobody can listen there either. Returns the other server, if any.
 */
export async function listenOnLoopback(
  app: FastifyInstance,
  wanted: number,
  limits: ConnectionLimits,
  serve: (server: Server) => void,
): Promise<Server[]> {
  for (let attempt = 1; ; attempt++) {
    let v6: Server | null = sideServer(limits, serve);
    try {
      await listen(v6, { host: LOOPBACKS[0], port: wanted });
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if (code !== 'EADDRNOTAVAIL' && code !== 'EAFNOSUPPORT') throw error;
      v6 = null;
    }
    const port = v6 ? (v6.address() as AddressInfo).port : wanted;
    try {
      await app.listen({ host: LOOPBACKS[1], port });
      return v6 ? [v6] : [];
    } catch (error) {
      await new Promise((closed) => (v6 ? v6.close(closed) : closed(null)));
      // A port found free on ::1 and taken on 127.0.0.1 meanwhile (or for long): another one, a few times.
      if ((error as NodeJS.ErrnoException).code !== 'EADDRINUSE' || wanted !== 0 || !v6 || attempt >= 20)
        throw error;
    }
  }
}

/**
 * The routes on a Unix socket, with the same limits: a socket left by a run that crashed is replaced (its folder
 * is the user's own, 0700, so nobody else can have put it there). Null when it cannot be listened on.
 */
export async function listenPrivately(
  path: string,
  limits: ConnectionLimits,
  serve: (server: Server) => void,
): Promise<Server | null> {
  const server = sideServer(limits, serve);
  // Only the user's processes reach it; its cap is node's plain one.
  server.maxConnections = limits.maxConnections;
  try {
    rmSync(path, { force: true });
    await listen(server, { path });
  } catch {
    return null;
  }
  // The user's alone, as every file of its folder (0600): the folder's 0700 already keeps others out.
  chmodSync(path, 0o600);
  return server;
}
