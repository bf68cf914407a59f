import { performance } from 'node:perf_hooks';
import type { FastifyReply, FastifyRequest } from 'fastify';
import {
  describeIssues,
  findFunction,
  levelAllows,
  requestBodySchema,
  TOKEN_EXPIRES_HEADER,
  toWireIssues,
  type FunctionPath,
  type FunctionSpec,
} from '../../protocol/index.ts';
import { CallRefused, CallUnauthenticated, DatabaseProblem, UnknownApiKey } from '../errors.ts';
import type { Caller } from '../store/access-tokens.ts';
import type { Credentials, Principal } from '../store/credentials.ts';
import type { RegisteredApiKey } from '../store/api-keys.ts';
import type { Implementation, Implementations } from '../functions/types.ts';
import { parseAuthorization } from './authorization.ts';
import type { MemberLimits } from './member-limits.ts';
import { describeLimit, exceededLimit } from './call-limits.ts';
import { sendError, sendValue, type ErrorStatus } from './envelope.ts';

export interface Dispatcher {
  /** Who may call: members' tokens and the shared tokens, kept fresh (store/credentials.ts). */
  credentials: Credentials;
  /** How many calls each member may make (member-limits.ts). */
  limits: MemberLimits;
  /** The registered personal API key whose secret this is, or null. */
  findApiKey: (secret: string) => Promise<RegisteredApiKey | null>;
  /** Whether the database answers a query now (the health route). */
  databaseAnswers: () => Promise<boolean>;
  implementations: Implementations<FunctionPath>;
}

/** Who a call comes from and which function it names, once `admitCall` let it in. */
export interface AdmittedCall {
  fn: FunctionSpec;
  caller: Caller;
  /** The credential's member (null for redeem_invite, whose credential is the invite). */
  member: Principal | null;
  invite: string | null;
}

/**
 * One call's first steps, in the order a caller can act on: which function, which method, who is calling. They
 * need only the request's head, so they run before its body is read (an `onRequest` hook): a caller without a
 * token is refused before the service keeps a byte of a body it sends (150 stalled 8 MiB uploads took the agent
 * from 130 MB to 1.36 GB when the token was checked after). Answers the refusal and returns null, or the call.
 */
export async function admitCall(
  deps: Dispatcher,
  path: string,
  request: FastifyRequest,
  reply: FastifyReply,
): Promise<AdmittedCall | null> {
  // Node reads the body of a refused call and drops it, keeping none of it; the time-outs close a connection whose
  // body never comes. Not closed at once: a client still sending would see "other side closed", not this answer.
  const refuse = (status: ErrorStatus, message: string, data: Record<string, unknown> = {}) => {
    void sendError(reply, status, message, data);
    return null;
  };
  const fn = findFunction(path);
  if (!fn) return refuse(404, `No function at ${path}: run "flowsync functions" to list them.`);
  if (request.method !== 'POST') {
    reply.header('allow', 'POST');
    return refuse(405, `${request.method} is not allowed: call functions with POST.`);
  }

  const auth = parseAuthorization(request.headers.authorization);
  if (!auth) {
    return refuse(
      401,
      'Missing or malformed Authorization header: send "Bearer <token>" or "Admin <token>".',
    );
  }
  // The invite is the credential of redeem_invite, and of nothing else; the function checks it in the database.
  if (fn.scope === 'invite') return { fn, caller: auth.claimed, member: null, invite: auth.token };
  // Fail closed: a list of members this process cannot confirm is current (its database does not answer) may
  // still hold a token revoked elsewhere.
  if (!(await deps.credentials.ensureFresh())) {
    request.log.warn(
      { problem: deps.credentials.problem },
      "the list of members cannot be confirmed current (the database's state): answered 503",
    );
    reply.header('retry-after', String(DATABASE_RETRY_AFTER_S));
    return refuse(
      503,
      "The service's database cannot take this call now: the service cannot confirm its list of members is current (its operator finds why in the service's log). Send it again in a moment.",
    );
  }
  const identified = await deps.credentials.identifyFresh(auth.claimed, auth.token);
  if (!identified.ok) return refuse(401, identified.message, identified.data);
  const member = identified.principal;
  request.log = request.log.child({ member: member.name, ...(member.tokenId && { token: member.tokenId }) });
  // Every answer to a member token says when it expires (GitHub's header): a client sees it coming, whatever it calls.
  if (member.expiresAt) reply.header(TOKEN_EXPIRES_HEADER, member.expiresAt);
  // The first use of a renewed token retires the one it replaced. Not a reason to refuse the call when the database
  // cannot take it now: the old token stops anyway at the end of its overlap, and the next call tries again.
  if (member.replaces)
    await deps.credentials
      .retire(member.replaces)
      .catch((error: unknown) =>
        request.log.warn(
          { problem: error instanceof Error ? error.message : String(error) },
          'the token this one renewed could not be retired yet',
        ),
      );
  if (!levelAllows(member.level, fn.scope)) {
    return refuse(403, forbiddenLine(member, fn.path, fn.scope), {
      needed: fn.scope,
      role: member.level,
      member: member.name,
    });
  }
  // The shared tokens are not limited: they behave as before members, and a team on one would share one bucket.
  const waitMs = member.shared ? 0 : deps.limits.take(member.memberId, performance.now());
  if (waitMs > 0) {
    const seconds = Math.max(1, Math.ceil(waitMs / 1000));
    reply.header('retry-after', String(seconds));
    return refuse(
      429,
      `${member.name} sent more than ${deps.limits.perSecond} calls a second to this service: wait ${seconds} s (flowsync's agent does this by itself).`,
      { retry_after_s: seconds, member: member.name },
    );
  }
  return { fn, caller: auth.claimed, member, invite: null };
}

/** The 403's sentence: who, what the function needs, and what to do; the CLI prints it as it is. */
export function forbiddenLine(member: Principal, path: string, needed: string): string {
  if (member.shared && member.level === 'write' && needed === 'operator')
    return `${path} is an operator function: call it with an admin token.`;
  if (member.level !== member.role)
    return `${path} is for operators: ${member.name} is one, but called with the Bearer scheme; call it with "Admin <token>".`;
  const who = member.shared
    ? `The shared ${member.role === 'operator' ? 'admin' : 'user'} token`
    : member.name;
  if (needed === 'write')
    return `${who} is a read-only member of this service: ${path} writes. Ask an operator for write access (\`flowsync service member role ${member.name} write\`).`;
  return `${who} is not an operator of this service (${member.role}): ${path} is for operators. Ask an operator for that role (\`flowsync service member role ${member.name} operator\`).`;
}

/** The rest of an admitted call, once its body is read: are the args right, then the function itself. */
export async function dispatchCall(
  deps: Dispatcher,
  { fn, caller, member, invite }: AdmittedCall,
  request: FastifyRequest,
  reply: FastifyReply,
) {
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
  // The checkout that called, as it names itself (its label, shown to teammates in the history anyway): an
  // operator reading the log sees which agent makes which calls.
  const writer = writerOf(request.headers['x-flowsync-writer']);
  request.log = request.log.child({ trace_id: traceId, fn: fn.path, ...(writer !== null && { writer }) });
  reply.log = request.log;
  try {
    const presented = (args.data as { api_key?: { secret: string } }).api_key;
    const apiKey = presented ? await deps.findApiKey(presented.secret) : null;
    if (presented && apiKey === null) throw new UnknownApiKey();
    const implementation = deps.implementations[fn.path] as Implementation<FunctionSpec['path']>;
    const value = await implementation(args.data as never, {
      traceId,
      caller,
      apiKey,
      writer,
      member,
      invite,
    });
    return sendValue(reply, value);
  } catch (error) {
    if (error instanceof CallRefused) return sendError(reply, 422, error.message, error.data);
    if (error instanceof CallUnauthenticated) return sendError(reply, 401, error.message, error.data);
    if (error instanceof UnknownApiKey)
      return sendError(reply, 401, error.message, { reason: 'unknown_api_key' });
    if (error instanceof DatabaseProblem) {
      // Not the service's bug but its database's state (restarted, gone, its disk full): the operator reads why in
      // the log, the caller sends the call again later (to this process or, behind a balancer, another). The
      // caller is told nothing about where the database is.
      request.log.warn({ problem: error.message }, 'the database cannot take calls: answered 503');
      reply.header('retry-after', String(DATABASE_RETRY_AFTER_S));
      return sendError(
        reply,
        503,
        "The service's database cannot take this call now (its operator finds why in the service's log): send it again in a moment.",
      );
    }
    // A bug: the app's error handler answers it, as every other 500, with an incident id in the log.
    throw error;
  }
}

/**
 * Seconds a caller waits before sending a call the database could not take: a Postgres restart takes a few, and
 * flowsync's client waits what Retry-After says instead of its own back-off.
 */
const DATABASE_RETRY_AFTER_S = 5;

/**
 * The writing client's name from its header, for the history: percent-decoded (a header is Latin-1 on the wire, so
 * flowsync's client percent-encodes a name's other characters, `~/código`), printable, at most 200 characters;
 * anything else is no name (it is shown to other developers, so it must not carry control characters).
 */
function writerOf(header: string | string[] | undefined): string | null {
  const raw = Array.isArray(header) ? header[0] : header;
  if (!raw) return null;
  let value: string;
  try {
    value = decodeURIComponent(raw);
  } catch {
    return null;
  }
  // eslint-disable-next-line no-control-regex
  return value.length <= 200 && !/[\u0000-\u001f\u007f]/.test(value) ? value : null;
}
