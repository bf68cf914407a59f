import { randomUUID } from 'node:crypto';
import type { FastifyReply, FastifyRequest } from 'fastify';
import {
  describeIssues,
  findFunction,
  requestBodySchema,
  toWireIssues,
  type FunctionPath,
  type FunctionSpec,
} from '../../protocol/index.ts';
import { CallRefused, UnknownApiKey } from '../errors.ts';
import type { AccessTokens } from '../store/access-tokens.ts';
import type { ApiKeys } from '../store/api-keys.ts';
import type { Implementation, Implementations } from '../functions/types.ts';
import { parseAuthorization } from './authorization.ts';
import { describeLimit, exceededLimit } from './call-limits.ts';
import { sendError, sendValue } from './envelope.ts';

export interface Dispatcher {
  tokens: AccessTokens;
  apiKeys: ApiKeys;
  implementations: Implementations<FunctionPath>;
}

/**
 * One call, in the order a caller can act on: which function, who is calling, is the body readable, are the args
 * right, then the function itself. Each step answers with its own HTTP code (DESIGN.md, "Protocol").
 */
export function dispatchCall(deps: Dispatcher, path: string, request: FastifyRequest, reply: FastifyReply) {
  const fn = findFunction(path);
  if (!fn) return sendError(reply, 404, `No function at ${path}: run "flowsync functions" to list them.`);
  if (request.method !== 'POST') {
    reply.header('allow', 'POST');
    return sendError(reply, 405, `${request.method} is not allowed: call functions with POST.`);
  }

  const auth = parseAuthorization(request.headers.authorization);
  if (!auth) {
    return sendError(
      reply,
      401,
      'Missing or malformed Authorization header: send "Bearer <token>" or "Admin <token>".',
    );
  }
  const caller = deps.tokens.identify(auth.token);
  if (caller === null || caller !== auth.claimed) {
    return sendError(reply, 401, 'Unknown token: sign in again with "flowsync login".');
  }
  if (fn.access === 'admin' && caller !== 'admin') {
    return sendError(reply, 403, `${fn.path} is an operator function: call it with an admin token.`);
  }

  const body = requestBodySchema.safeParse(request.body);
  if (!body.success) {
    const issues = toWireIssues(body.error.issues);
    return sendError(reply, 400, `The body must be {"args": {...}}: ${describeIssues(issues, 'body')}`, {
      issues,
    });
  }
  const exceeded = exceededLimit(fn.path, body.data.args);
  if (exceeded) {
    return sendError(reply, 413, `${fn.path} takes ${describeLimit(exceeded)}: send fewer per call.`, {
      ...exceeded,
    });
  }
  const args = fn.args.safeParse(body.data.args);
  if (!args.success) {
    const issues = toWireIssues(args.error.issues);
    return sendError(reply, 400, `Invalid args: ${describeIssues(issues)}`, { issues });
  }

  const traceId = args.data.baggage.trace_id;
  request.log = request.log.child({ trace_id: traceId, fn: fn.path });
  reply.log = request.log;
  try {
    const apiKey = 'api_key' in args.data ? deps.apiKeys.findBySecret(args.data.api_key.secret) : null;
    if ('api_key' in args.data && apiKey === null) throw new UnknownApiKey();
    const implementation = deps.implementations[fn.path] as Implementation<FunctionSpec['path']>;
    const value = implementation(args.data as never, { traceId, caller, apiKey });
    return sendValue(reply, value);
  } catch (error) {
    if (error instanceof CallRefused) return sendError(reply, 422, error.message, error.data);
    if (error instanceof UnknownApiKey)
      return sendError(reply, 401, error.message, { reason: 'unknown_api_key' });
    const incident = randomUUID();
    request.log.error({ err: error, incident }, 'function failed');
    return sendError(reply, 500, `Internal error (incident ${incident}); the service log has the details.`, {
      incident,
    });
  }
}
