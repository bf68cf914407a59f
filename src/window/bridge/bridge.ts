import Fastify, { type FastifyInstance, type FastifyReply, type FastifyRequest } from 'fastify';
import { randomBytes } from 'node:crypto';
import { chmodSync, readFileSync, rmSync, statSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { extname, join, normalize } from 'node:path';
import {
  AGENT_API,
  AgentApiError,
  type AgentApi,
  type AgentApiMethod,
  type AgentEvent,
  replyError,
  replyValue,
} from '../contract.ts';
import { toAgentApiError } from '../implementation.ts';
import { fromAnotherUser } from '../../client/index.ts';
import type { SocketPlace } from '../../host/index.ts';
import { MAX_JSON_DEPTH, describeIssues, findDeepNesting, toWireIssues } from '../../protocol/index.ts';
import {
  capConnections,
  connectionLimits,
  serverOptions,
  type ConnectionLimits,
} from '../../service/index.ts';
import { WindowSessions } from './window-sessions.ts';

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

const HTTP_STATUS: Record<AgentApiError['code'], number> = {
  invalid_input: 400,
  not_found: 404,
  refused: 422,
  unavailable: 503,
  internal: 500,
};

const CONTENT_TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.ico': 'image/x-icon',
  '.json': 'application/json',
};

/** No remote content, no framing, no inline script: the page can only talk to this bridge. */
const CSP =
  "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; " +
  "connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'none'";

const ANOTHER_USERS = "This window is another user's: open your own with `flowsync ui --open`.";

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

/** Browsers try `::1` before 127.0.0.1 for a `localhost` name: the bridge holds the port on both (listenOnLoopback). */
const LOOPBACKS = ['::1', '127.0.0.1'] as const;

/**
 * Connections the bridge holds at once: 19,995 idle ones from any local process took every descriptor the agent had.
 * A window uses its event stream and a few calls (Chromium opens at most 6 to one address), but a client's closed
 * sockets still count until the server sees them go: at 32, 20 calls at a time from undici were refused now and then.
 */
const BRIDGE_MAX_CONNECTIONS = 128;

declare module 'fastify' {
  interface FastifyContextConfig {
    /** The route takes a window's session from `?token=` too: only the event stream, which EventSource opens. */
    tokenInQuery?: boolean;
    /** Who may call the route: a window or the agent (default), the agent only, or anyone (the session exchange). */
    caller?: 'any' | 'agent' | 'nobody-checked';
  }
}

/**
 * The credential a request presents: `Authorization: Bearer <token>`, never the query (a URL ends up in shell
 * history and logs), except a window's session on the event stream, which a browser opens with EventSource and so
 * cannot send a header. A cookie would be the other way, and it is worse on loopback: cookies ignore the port, so
 * every other server on 127.0.0.1 the browser visits would be sent it, and SameSite counts all those ports as
 * the same site.
 */
function presentedToken(request: FastifyRequest): { token: string; inQuery: boolean } {
  const header = /^Bearer +(\S+)$/i.exec(request.headers.authorization ?? '')?.[1];
  if (header !== undefined) return { token: header, inQuery: false };
  const query = (request.query as { token?: unknown }).token;
  return request.routeOptions.config.tokenInQuery && typeof query === 'string'
    ? { token: query, inQuery: true }
    : { token: '', inQuery: false };
}

/**
 * The loopback bridge: AgentApi over HTTP on the loopback addresses for a browser, like Syncthing's web GUI, at an
 * address of this run's own (windowName). Every API request needs the random token (checked after routing, see
 * `api` below); the Host header must be this run's name and port (no DNS rebinding, no address of an earlier run)
 * and an Origin, when sent, must be this page's (no other site may call it from a user's browser). Status is pushed
 * as server-sent events. The agent's own processes reach the same routes through a private Unix socket.
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
  // A connection has a short time (keep-alive's, 5 s) until it shows a valid credential, then the usual 30 s: one
  // that only waits holds a slot that briefly (a window's event stream, a heartbeat every 15 s, needs the 30 s).
  const timeConnections = (server: Server) =>
    server.on('connection', (socket: Socket) => socket.setTimeout(limits.keepAliveMs));
  capConnections(app.server, limits.maxConnections);
  timeConnections(app.server);
  const credentialShown = (socket: Socket) => socket.setTimeout(limits.idleMs);
  // Whether a connection is another local user's (or of a user the kernel does not name), asked once per
  // connection (a WeakMap by socket). One through the private socket is the user's: nobody else can open it.
  const strangers = new WeakMap<Socket, boolean>();
  const fromStranger = (socket: Socket) => {
    let stranger = strangers.get(socket);
    if (stranger === undefined) strangers.set(socket, (stranger = fromAnotherUser(socket)));
    return stranger;
  };
  const streams = new Set<NodeJS.WritableStream & { end(): void }>();
  const name = windowName();
  let port = 0;
  // Exactly this run's name and port: no other name (DNS rebinding), and no address of an earlier run.
  const windowHost = () => `${name}:${port}`;

  // A refused request's connection is closed with its answer: it keeps no slot for a next try.
  const refuse = (reply: FastifyReply, status: number, message: string) =>
    reply
      .code(status)
      .header('connection', 'close')
      .send(replyError({ code: 'refused', message }));

  // The depth is checked before the body is parsed: the contract's schemas recurse once a level, and 20,000
  // levels in a z.json() field overflowed the stack (500).
  const parseJson = app.getDefaultJsonParser('error', 'error');
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (request, body, done) => {
    const text = String(body);
    const deep = findDeepNesting(text);
    if (!deep) return parseJson(request, text, done);
    const message = `nested deeper than ${MAX_JSON_DEPTH} levels`;
    done(
      new AgentApiError('invalid_input', `${deep.join('.')}: ${message}`, [{ path: deep, message }]),
      undefined,
    );
  });
  // What a route throws outside an AgentApi method (a static file that cannot be read, a hook): answered as a
  // method's error is (callMethod), by the one classifier, so a 500 is always a bug with an incident id in
  // agent.log. Before, anything here that was not fastify's own 4xx was sent as 500, even an error the classifier
  // knows (a storage fault, 'unavailable'), whose answer then named no incident.
  app.setErrorHandler((error: { statusCode?: number }, _request, reply) => {
    if (!(error instanceof AgentApiError) && error.statusCode !== undefined && error.statusCode < 500) {
      const body = { code: 'invalid_input' as const, message: 'The body is not valid JSON.' };
      return reply.code(error.statusCode).send(replyError(body));
    }
    const answer = toAgentApiError(error);
    return reply.code(HTTP_STATUS[answer.code]).send(replyError(answer));
  });

  // Every answer, assets included, is kept by no cache: a cached one would be served to a later page without
  // asking, and the window is on loopback, where fetching again costs nothing.
  app.addHook('onRequest', async (request, reply) => {
    reply.header('x-content-type-options', 'nosniff');
    reply.header('referrer-policy', 'no-referrer');
    reply.header('cache-control', 'no-store');
    if (request.headers.host !== windowHost()) {
      return refuse(
        reply,
        403,
        "This address is not the flowsync window's: each run of the agent has its own, and `flowsync ui --open` opens it.",
      );
    }
    const origin = request.headers.origin;
    if (origin !== undefined && origin !== `http://${windowHost()}`) {
      return refuse(reply, 403, 'Requests from other sites are refused.');
    }
    // A page of this origin registering a worker (the bridge serves scripts): none of the window's does.
    if (request.headers['service-worker'] !== undefined) {
      return refuse(reply, 403, 'The flowsync window registers no service worker.');
    }
  });

  const callMethod = async (request: FastifyRequest, reply: FastifyReply) => {
    const name = (request.params as { method: string }).method;
    if (!Object.hasOwn(AGENT_API, name)) {
      return reply.code(404).send(replyError({ code: 'not_found', message: `No method ${name}.` }));
    }
    const method = name as AgentApiMethod;
    const parsed = AGENT_API[method].input.safeParse(request.body ?? {});
    if (!parsed.success) {
      // In a person's words (which field, what it should be), as the window's forms show them under the field.
      const issues = toWireIssues(parsed.error.issues).map(({ path, message }) => ({ path, message }));
      const error = new AgentApiError('invalid_input', describeIssues(issues, ''), issues);
      return reply.code(400).send(replyError(error));
    }
    try {
      const call = options.api[method] as (input: unknown) => Promise<unknown>;
      const value = AGENT_API[method].output.parse(await call(parsed.data));
      return replyValue(value);
    } catch (thrown) {
      const error = toAgentApiError(thrown);
      return reply.code(HTTP_STATUS[error.code]).send(replyError(error));
    }
  };

  const streamEvents = (request: FastifyRequest, reply: FastifyReply) => {
    reply.hijack();
    const stream = reply.raw;
    stream.writeHead(200, {
      'content-type': 'text/event-stream; charset=utf-8',
      'cache-control': 'no-store',
      connection: 'keep-alive',
      'x-content-type-options': 'nosniff',
    });
    const send = (event: AgentEvent) =>
      stream.write(`event: ${event.type}\ndata: ${JSON.stringify(event)}\n\n`);
    const unsubscribe = options.subscribe(send);
    streams.add(stream);
    // A comment now and then keeps proxies and the browser from closing an idle stream.
    const heartbeat = setInterval(() => stream.write(': keep-alive\n\n'), 15_000);
    request.raw.on('close', () => {
      clearInterval(heartbeat);
      unsubscribe();
      streams.delete(stream);
    });
  };

  // A page gets its session here (see window-sessions.ts), with one of: the launch token of its address (once), its
  // tab's credential of this run (a reload), or the session it holds (back after the agent's restart: a new tab
  // credential). Each answer has a new tab credential, or the one presented.
  const startSession = async (request: FastifyRequest, reply: FastifyReply) => {
    const body = (request.body ?? {}) as { launch?: unknown; tab?: unknown; session?: unknown };
    const text = (value: unknown) => (typeof value === 'string' ? value : '');
    const [launch, tab, held] = [text(body.launch), text(body.tab), text(body.session)];
    const valid =
      (launch !== '' && sessions.isLaunch(launch)) ||
      (tab !== '' && sessions.isTab(tab)) ||
      (held !== '' && sessions.identify(held) === 'session');
    if (!valid) {
      return refuse(
        reply,
        401,
        launch !== ''
          ? 'This window address was already used (or is from an earlier run): `flowsync ui --open` opens a new one.'
          : "This window's session has ended: `flowsync ui --open` opens a new window.",
      );
    }
    // A launch token is in the browser's argv while it starts (`flowsync ui --open`), where every user reads it in
    // /proc: traded only with this user's processes, a copy read there is worth nothing to another user. It stays
    // alive then, so the user's own page still opens. Asked only for a valid credential: a table read per
    // connection is what let idle connections stall the bridge (see `api` below).
    if (fromStranger(request.raw.socket)) return refuse(reply, 403, ANOTHER_USERS);
    credentialShown(request.raw.socket);
    if (launch !== '') return replyValue({ session: sessions.exchange(launch)!, tab: sessions.newTab() });
    if (tab !== '') return replyValue({ session: sessions.reopen(tab)!, tab });
    return replyValue({ session: held, tab: sessions.newTab() });
  };

  // A page that lost its agent asks this before it sends its session again (window-sessions.ts, prove).
  const hello = async (request: FastifyRequest, reply: FastifyReply) => {
    const { id, challenge } = (request.body ?? {}) as { id?: unknown; challenge?: unknown };
    const valid = (text: unknown): text is string => typeof text === 'string' && /^[\w-]{16,128}$/.test(text);
    const proof = valid(id) && valid(challenge) ? sessions.prove(id, challenge, port) : null;
    if (proof !== null && fromStranger(request.raw.socket)) return refuse(reply, 403, ANOTHER_USERS);
    return replyValue({ agent: 'flowsync', proof });
  };

  // Every route under /api needs a credential. The check is a hook of this plugin, so it runs after routing, on the
  // route the router chose: a spelling of the path that the router decodes (`/%61pi/status`) cannot skip it.
  const api = async (routes: FastifyInstance) => {
    routes.addHook('onRequest', async (request, reply) => {
      const caller = request.routeOptions.config.caller ?? 'any';
      if (caller === 'nobody-checked') return;
      const { token, inQuery } = presentedToken(request);
      const who = sessions.identify(token);
      if (who === null || (inQuery && who !== 'session')) {
        return refuse(
          reply,
          401,
          "This window's session is missing or has ended: `flowsync ui --open` opens a new window.",
        );
      }
      if (caller === 'agent' && who !== 'agent') {
        return refuse(reply, 403, 'Only the agent itself may do this.');
      }
      // A valid credential from another local user (a session their page read, served on this port while the agent
      // was stopped; README, Security model) opens nothing, nor one from a peer whose user the kernel does not name
      // (a client that half-closed or closed its end after sending). Asked only of a request with a valid
      // credential: read for every connection, the kernel's socket table let 4,000 idle connections from any
      // process stall the bridge (test/agent/connection-limits.test.ts), and a table read is 20-50 ms at a load
      // of 20.
      if (fromStranger(request.raw.socket)) return refuse(reply, 403, ANOTHER_USERS);
      credentialShown(request.raw.socket);
    });
    routes.post('/:method', callMethod);
    routes.get('/events', { config: { tokenInQuery: true } }, streamEvents);
    routes.post('/session', { config: { caller: 'nobody-checked' } }, startSession);
    routes.post('/hello', { config: { caller: 'nobody-checked' } }, hello);
    routes.post('/launch', { config: { caller: 'agent' } }, async () => replyValue({ url: launchUrl() }));
  };
  await app.register(api, { prefix: '/api' });

  app.get('/*', async (request, reply) => {
    const asset = normalize((request.params as { '*': string })['*'] || 'index.html').replace(
      /^(\.\.[/\\])+/,
      '',
    );
    const file = options.staticDir ? join(options.staticDir, asset) : null;
    // A folder (`/assets/`) is not a file: reading it threw EISDIR, a 500 with a stack in agent.log each time.
    if (file && file.startsWith(options.staticDir!) && statSync(file, { throwIfNoEntry: false })?.isFile()) {
      reply.header('content-type', CONTENT_TYPES[extname(file)] ?? 'application/octet-stream');
      if (extname(file) === '.html') reply.header('content-security-policy', CSP);
      return reply.send(readFileSync(file));
    }
    if (asset !== 'index.html')
      return reply.code(404).send(replyError({ code: 'not_found', message: 'Not found.' }));
    reply.header('content-type', CONTENT_TYPES['.html']).header('content-security-policy', CSP);
    return reply.send(
      '<!doctype html><meta charset="utf-8"><title>flowsync</title>' +
        '<p>The flowsync window is not built in this checkout: run <code>npm run build:renderer</code>, then reload.</p>',
    );
  });

  const launchUrl = () => `http://${windowHost()}/#token=${sessions.newLaunch()}`;
  await app.ready();
  // The same routes on the other loopback and on the private socket, with the same limits.
  const route = (server: Server) =>
    server.on('request', (request, response) => app.routing(request, response));
  const others = await listenOnLoopback(app, options.port ?? 0, limits, (server) => {
    capConnections(server, limits.maxConnections);
    timeConnections(server);
    route(server);
  });
  port = (app.server.address() as AddressInfo).port;
  const privately = options.socket
    ? await listenPrivately(options.socket.path, limits, (server) => {
        timeConnections(server);
        server.on('connection', (socket: Socket) => strangers.set(socket, false));
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
 * `localhost` name on ::1 first, so a port the bridge held on 127.0.0.1 alone could be another user's on ::1, and
 * they would serve this run's window to the user's browser. A free port is found on ::1 and then taken on
 * 127.0.0.1 (another one when that is taken); a port the user chose must be free on both. Where the machine has no
 * ::1, nobody can listen there either. Returns the other server, if any.
 */
async function listenOnLoopback(
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
async function listenPrivately(
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
