import type { FastifyInstance, FastifyRequest } from 'fastify';
import { MAX_JSON_DEPTH, findDeepNesting } from '../../protocol/index.ts';
import { AgentApiError, replyError } from '../contract.ts';
import { toAgentApiError } from '../implementation.ts';
import { ANOTHER_USERS, HTTP_STATUS, refuse } from './answers.ts';
import type { Callers } from './callers.ts';
import type { WindowSessions } from './window-sessions.ts';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** The route takes a window's session from `?token=` too: only the event stream, which EventSource opens. */
    tokenInQuery?: boolean;
    /** Who may call the route: a window or the agent (default), the agent only, or anyone (the session exchange). */
    caller?: 'any' | 'agent' | 'nobody-checked';
  }
}

/**
 * The depth is checked before the body is parsed: the contract's schemas recurse once a level, and 20,000 levels
 * in a z.json() field overflowed the stack (500).
 */
export function parseJsonOfBoundedDepth(app: FastifyInstance): void {
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
}

/**
 * What a route throws outside an AgentApi method (a static file that cannot be read, a hook): answered as a
 * method's error is (callMethod), by the one classifier, so a 500 is always a bug with an incident id in
 * agent.log. Before, anything here that was not fastify's own 4xx was sent as 500, even an error the classifier
 * knows (a storage fault, 'unavailable'), whose answer then named no incident.
 */
export function answerErrors(app: FastifyInstance): void {
  app.setErrorHandler((error: { statusCode?: number }, _request, reply) => {
    if (!(error instanceof AgentApiError) && error.statusCode !== undefined && error.statusCode < 500) {
      const body = { code: 'invalid_input' as const, message: 'The body is not valid JSON.' };
      return reply.code(error.statusCode).send(replyError(body));
    }
    const answer = toAgentApiError(error);
    return reply.code(HTTP_STATUS[answer.code]).send(replyError(answer));
  });
}

/** Every request, assets included: to this run's name and port only, and from this page only. */
export function checkAddress(app: FastifyInstance, windowHost: () => string): void {
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
}

/**
 * Every route under /api needs a credential. The check is a hook of that plugin, so it runs after routing, on the
 * route the router chose: a spelling of the path that the router decodes (`/%61pi/status`) cannot skip it.
 */
export function checkCredential(routes: FastifyInstance, sessions: WindowSessions, callers: Callers): void {
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
    if (callers.fromStranger(request.raw.socket)) return refuse(reply, 403, ANOTHER_USERS);
    callers.credentialShown(request.raw.socket);
  });
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
