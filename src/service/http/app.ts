import Fastify, { LogController } from 'fastify';
import type { Logger } from 'pino';
import { newIncidentId } from '../../host/index.ts';
import { API_PREFIX, MAX_JSON_DEPTH, findDeepNesting } from '../../protocol/index.ts';
import { NestedTooDeep } from '../errors.ts';
import { capConnections, serverOptions, type ConnectionLimits } from './connection-limits.ts';
import { admitCall, dispatchCall, type AdmittedCall, type Dispatcher } from './dispatch.ts';
import { sendError } from './envelope.ts';

export const DEFAULT_BODY_LIMIT = 8 * 1024 * 1024;

/** The health route (GET, no auth): `{"status":"up","database":"up"}`, or 503 with "down". */
export const HEALTH_PATH = '/health';

export interface AppOptions {
  logger: Logger;
  bodyLimit: number;
  limits: ConnectionLimits;
}

/** The HTTP face of the service: one route for every function, and an envelope for every error. */
export function buildApp(deps: Dispatcher, options: AppOptions) {
  const app = Fastify({
    loggerInstance: options.logger,
    // One line a call, written in onResponse with the trace id, instead of fastify's two generic ones.
    logController: new LogController({ disableRequestLogging: true }),
    bodyLimit: options.bodyLimit,
    // Trace ids come from the caller's baggage; fastify's own request ids would only add noise.
    genReqId: () => '',
    ...serverOptions(options.limits),
  });
  capConnections(app.server, options.limits.maxConnections);

  // Any content type is read as JSON: a caller that forgot the header gets the same answer as one that sent it.
  // The depth is checked first, without recursion: what reads the body after it (zod) recurses once a level.
  const parseJson = app.getDefaultJsonParser('error', 'error');
  const parseBody: typeof parseJson = (request, body, done) => {
    const deep = findDeepNesting(String(body));
    if (deep) return done(new NestedTooDeep(deep), undefined);
    return parseJson(request, body, done);
  };
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('application/json', { parseAs: 'string' }, parseBody);
  app.addContentTypeParser('*', { parseAs: 'string' }, parseBody);

  // Admitted (function, method, token) on the request's head, before its body is read; then dispatched.
  const admitted = new WeakMap<object, AdmittedCall>();
  app.all(`${API_PREFIX}*`, {
    onRequest: async (request, reply) => {
      const call = await admitCall(deps, (request.params as { '*': string })['*'], request, reply);
      if (call) admitted.set(request, call);
      else return reply;
    },
    // A call being worked on sends nothing until it answers, and on Postgres it may wait (for a flow another
    // process writes): the connection's idle time-out is for a caller that went quiet, so it is off meanwhile.
    // With it on, a call that waited past it had its connection closed, the client sent it again, and the first
    // went on to commit all the same (test/cli/team-on-postgres.test.ts). The body is in by now (requestMs).
    handler: async (request, reply) => {
      const socket = request.raw.socket;
      socket.setTimeout(0);
      try {
        return await dispatchCall(deps, admitted.get(request)!, request, reply);
      } finally {
        socket.setTimeout(options.limits.idleMs);
      }
    },
  });

  // For a load balancer in front of several service processes: no token, no data, only whether this process and
  // its database answer (503 while the database does not, so the balancer sends calls to another process).
  app.get(HEALTH_PATH, async (_request, reply) => {
    const database = await deps.databaseAnswers();
    return reply
      .code(database ? 200 : 503)
      .send({ status: database ? 'up' : 'down', database: database ? 'up' : 'down' });
  });

  // Refused on its head too: fastify reads the body of a request to an unknown path before its not-found handler.
  const notFound = `Not a flowsync endpoint: functions are called at POST ${API_PREFIX}<function path>.`;
  app.addHook('onRequest', (request, reply, done) => {
    if (request.is404) void sendError(reply, 404, notFound);
    done();
  });
  app.setNotFoundHandler((_request, reply) => sendError(reply, 404, notFound));

  app.setErrorHandler((error: { statusCode?: number; code?: string }, request, reply) => {
    if (error instanceof NestedTooDeep) {
      const issue = {
        path: error.path,
        message: `nested deeper than ${MAX_JSON_DEPTH} levels`,
        code: 'too_deep',
      };
      return sendError(reply, 400, error.message, { issues: [issue] });
    }
    if (error.statusCode === 413) {
      return sendError(reply, 413, `The body is larger than ${options.bodyLimit} bytes: send less per call.`);
    }
    if (error.statusCode !== undefined && error.statusCode >= 400 && error.statusCode < 500) {
      // The parser's own message may quote the body, and the body may hold a secret: say only what to do.
      return sendError(reply, 400, 'The body is not valid JSON: send {"args": {...}} as JSON.', {
        code: error.code ?? 'bad_request',
      });
    }
    // Every 500 of the service, a failed function's included (dispatch.ts throws it here): the answer names the
    // incident, the log has it with the error and, for a call, its trace id. Before, only a failed function's
    // answer named one, and any other 500 said to read a log without saying where in it.
    const incident = newIncidentId();
    request.log.error({ err: error, incident }, 'incident');
    return sendError(reply, 500, `Internal error (incident ${incident}); the service log has the details.`, {
      incident,
    });
  });

  app.addHook('onResponse', (request, reply, done) => {
    request.log.info({ status: reply.statusCode, ms: Number(reply.elapsedTime.toFixed(3)) }, 'call');
    done();
  });

  return app;
}
