import Fastify from 'fastify';
import { randomBytes } from 'node:crypto';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { replyValue, type AgentApi, type AgentEvent } from '../contract.ts';
import type { SocketPlace } from '../../host/index.ts';
import { capConnections, connectionLimits, serverOptions } from '../../service/index.ts';
import { WindowSessions } from './window-sessions.ts';
import { Callers } from './callers.ts';
import { answerErrors, checkAddress, checkCredential, parseJsonOfBoundedDepth } from './request-checks.ts';
import { callMethod } from './call-method.ts';
import { streamEvents, type OpenStreams } from './event-stream.ts';
import { hello, startSession } from './session-routes.ts';
import { staticFiles } from './static-files.ts';
import { listenOnLoopback, listenPrivately } from './listen.ts';

export interface BridgeOptions {
  api: AgentApi;
  /** Calls the listener with every event until the returned function is called. */
  subscribe: (listener: (event: AgentEvent) => void) => () => void;
  /** The port the user chose (`--ui-port`): taken by another program, the bridge does not start. */
  port?: number;
  /**
   * Where the agent's own processes reach it (the CLI, through the agent lock): a Unix socket only this user can
   * open (host's privateSocketPlace), removed when the bridge closes. Without it they use the window's port.
   */
  socket?: SocketPlace | null;
  /** The built renderer (renderer/dist); without it the page says how to build it. */
  staticDir?: string;
}

export interface Bridge {
  /**
   * The window's address without any credential: what `flowsync status` and a log may show. This run's alone:
   * `http://<random>.localhost:<port>/` (windowName says why).
   */
  address: string;
  /**
   * The address with the agent token after `#`, for the agent's own processes (the agent lock, 0600, and the
   * desktop handshake): never printed, never opened in a browser.
   */
  agentUrl: string;
  /** A new address that opens the window once: its launch token dies when the page trades it for a session. */
  launchUrl(): string;
  port: number;
  /** The Unix socket the agent's own processes reach it through; null when there is none (see BridgeOptions). */
  socketPath: string | null;
  close(): Promise<void>;
}

/**
 * The window's host name for one run: a random name under `localhost`, which browsers resolve to the loopback
 * addresses themselves (Chromium and Firefox; never a DNS query). A page's origin is its scheme, host and port, and
 * what a browser keeps for an origin (a service worker, a cached page or script, a kept-alive connection, storage)
 * applies to that origin alone. With the same `http://127.0.0.1:<port>` every run, another local user serving that
 * port while the agent was stopped could leave any of those for the next window to use, and take its session
 * (test/e2e/window-origin.test.ts plays each); no program can have served a name nobody knew before this run.
 * 128 bits, in base 36 (a DNS label, lower case).
 */
function windowName(): string {
  return `${BigInt(`0x${randomBytes(16).toString('hex')}`).toString(36)}.localhost`;
}

/**
 * Connections the bridge holds at once: 19,995 idle ones from any local process took every descriptor the agent had.
 * A window uses its event stream and a few calls (Chromium opens at most 6 to one address), but a client's closed
 * sockets still count until the server sees them go: at 32, 20 calls at a time from undici were refused now and then.
 */
const BRIDGE_MAX_CONNECTIONS = 128;

/**
 * The loopback bridge: AgentApi over HTTP on the loopback addresses for a browser, like Syncthing's web GUI, at an
 * address of this run's own (windowName). Every API request needs the random token (checked after routing, see
 * checkCredential); the Host header must be this run's name and port (no DNS rebinding, no address of an earlier
 * run) and an Origin, when sent, must be this page's (no other site may call it from a user's browser). Status is
 * pushed as server-sent events. The agent's own processes reach the same routes through a private Unix socket.
 */
export async function startBridge(options: BridgeOptions): Promise<Bridge> {
  const sessions = new WindowSessions();
  // An open window keeps its event stream open: closing the bridge must end those, not wait for them.
  const limits = connectionLimits(BRIDGE_MAX_CONNECTIONS);
  const app = Fastify({
    logger: false,
    bodyLimit: 1024 * 1024,
    forceCloseConnections: true,
    ...serverOptions(limits),
  });
  const callers = new Callers(limits);
  capConnections(app.server, limits.maxConnections);
  callers.timeConnections(app.server);
  const streams: OpenStreams = new Set();
  const name = windowName();
  let port = 0;
  // Exactly this run's name and port: no other name (DNS rebinding), and no address of an earlier run.
  const windowHost = () => `${name}:${port}`;
  const launchUrl = () => `http://${windowHost()}/#token=${sessions.newLaunch()}`;

  parseJsonOfBoundedDepth(app);
  answerErrors(app);
  checkAddress(app, windowHost);
  await app.register(
    async (routes) => {
      checkCredential(routes, sessions, callers);
      routes.post('/:method', callMethod(options.api));
      routes.get('/events', { config: { tokenInQuery: true } }, streamEvents(options.subscribe, streams));
      routes.post('/session', { config: { caller: 'nobody-checked' } }, startSession(sessions, callers));
      routes.post(
        '/hello',
        { config: { caller: 'nobody-checked' } },
        hello(sessions, callers, () => port),
      );
      routes.post('/launch', { config: { caller: 'agent' } }, async () => replyValue({ url: launchUrl() }));
    },
    { prefix: '/api' },
  );
  app.get('/*', staticFiles(options.staticDir));
  await app.ready();

  // The same routes on the other loopback and on the private socket, with the same limits.
  const route = (server: Server) =>
    server.on('request', (request, response) => app.routing(request, response));
  const others = await listenOnLoopback(app, options.port ?? 0, limits, (server) => {
    capConnections(server, limits.maxConnections);
    callers.timeConnections(server);
    route(server);
  });
  port = (app.server.address() as AddressInfo).port;
  const privately = options.socket
    ? await listenPrivately(options.socket.path, limits, (server) => {
        callers.timeConnections(server);
        callers.ownConnections(server);
        route(server);
      })
    : null;
  if (!privately) options.socket?.remove();
  return {
    address: `http://${windowHost()}/`,
    agentUrl: `http://${windowHost()}/#token=${sessions.agentToken}`,
    launchUrl,
    port,
    socketPath: privately ? options.socket!.path : null,
    close: async () => {
      for (const stream of streams) stream.end();
      for (const server of [...others, ...(privately ? [privately] : [])]) {
        server.closeAllConnections();
        await new Promise((closed) => server.close(closed));
      }
      if (privately) options.socket!.remove();
      await app.close();
    },
  };
}
