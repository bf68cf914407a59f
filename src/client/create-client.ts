import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { Pool, type Dispatcher } from 'undici';
import {
  API_PREFIX,
  describeIssues,
  envelopeSchema,
  findFunction,
  systemErrorSchema,
  overSpecLimits,
  SPEC_CALL_LIMITS,
  toWireIssues,
  type Baggage,
  type Envelope,
  type FunctionPath,
  type FunctionSpec,
  type ValueOf,
} from '../protocol/index.ts';
import { authorizationHeader, toAuthProvider, type ClientAuth } from './auth.ts';
import { contentNotItsHash } from './content-hash.ts';
import { FOREIGN_LISTENER, ownListenerConnector } from './listener-owner.ts';
import {
  InvalidArgsError,
  MissingCredentialsError,
  ProtocolError,
  RemoteError,
  TransportError,
  type AnswerForm,
} from './errors.ts';
import { failureKind } from './failure.ts';
import { groupedMethods, type CallArgs, type CallOptions, type GroupedMethods } from './methods.ts';
import {
  backoffDelay,
  DEFAULT_RETRY,
  mayRetryFailure,
  mayRetryStatus,
  retryAfterMs,
  type RetryOptions,
} from './retry.ts';

export interface ClientOptions {
  /** The service's address, e.g. `http://127.0.0.1:7420` (a path prefix is kept). */
  baseUrl: string;
  auth: ClientAuth;
  /**
   * How long a call may take in all, its retries, back-offs and the whole reply (headers and body) included;
   * actions (`…/action/…`) get `actionTimeoutMs`. `FLOWSYNC_TIMEOUT_MS` in the environment sets both.
   */
  timeoutMs?: number;
  actionTimeoutMs?: number;
  retry?: Partial<RetryOptions>;
  /** `traffic_type` of the baggage the client fills in. */
  trafficType?: string;
  /**
   * Who writes, as the service's history shows it to other developers (`dev@laptop:~/code/app`): sent as
   * `x-flowsync-writer` with every call (a service of the spec ignores it). A call's own `writer` wins.
   */
  writer?: string;
  /**
   * Connect through this Unix socket instead of the URL's port (the embedded service's, in the user's 0700 data
   * folder): nobody else can open it, so nobody can hold its connection slots. The URL still names the service.
   */
  socketPath?: string;
}

/** An answer from the service: the HTTP code and the envelope, success or not (a system error is thrown). */
export interface Reply {
  statusCode: number;
  envelope: Envelope;
  traceId: string;
  /** The service's clock when it answered (its HTTP Date header, to the second); null when it sent none. */
  date: string | null;
}

export interface RemoteClient extends GroupedMethods {
  readonly baseUrl: string;
  /** Calls a function and returns its value; throws RemoteError, TransportError, ProtocolError or InvalidArgsError. */
  call<P extends FunctionPath>(path: P, args: CallArgs<P>, options?: CallOptions): Promise<ValueOf<P>>;
  /** Like `call`, but an error envelope is returned, not thrown (for `flowsync call --raw`). */
  reply<P extends FunctionPath>(path: P, args: CallArgs<P>, options?: CallOptions): Promise<Reply>;
  close(): Promise<void>;
}

const DEFAULT_TIMEOUT_MS = 30_000;
const DEFAULT_ACTION_TIMEOUT_MS = 120_000;
/**
 * The largest reply the client reads; a larger one is cut off and the call fails (not retried: the same service
 * would send it again). The largest real answers: an issue search or batch of 250 issues (MAX_PAGE_SIZE) whose
 * descriptions are at the tracker's 100,000 characters, about 25 MB of ASCII and 75 MB if every character takes
 * 3 bytes of UTF-8; a sync_batch of 30,000 files (SYNC_CALL_LIMITS) with `files` is about 10 MB with 200-character
 * paths. 128 MiB is above both with room; without a cap a 1.5 GB reply took the agent to 3.2 GB, on every retry.
 */
const MAX_REPLY_BYTES = 128 * 1024 * 1024;
/** A server asking for a longer pause than this is treated as down for now. */
const MAX_RETRY_AFTER_MS = 60_000;
/**
 * The most of a service's error message the client keeps. A flowsync service's longest are a few paths of at most
 * 1,024 characters and five schema issues (describeIssues); a longer one would be stored in the state for each
 * refused flow and printed by every `flowsync status`.
 */
const MAX_ERROR_MESSAGE_CHARS = 4_000;

export function createClient(options: ClientOptions): RemoteClient {
  const base = new URL(options.baseUrl);
  if (base.protocol !== 'http:' && base.protocol !== 'https:') {
    throw new TypeError(`The service URL must start with http:// or https:// (got ${base.protocol}).`);
  }
  const baseUrl = options.baseUrl.replace(/\/+$/, '');
  const basePath = base.pathname.replace(/\/+$/, '');
  const authFor = toAuthProvider(options.auth);
  const retry = { ...DEFAULT_RETRY, ...options.retry };
  const trafficType = options.trafficType ?? 'external';
  const fromEnvironment = timeoutFromEnvironment();
  // One keep-alive pool per client: a sync of thousands of files reuses a handful of connections.
  const pool = new Pool(base.origin, {
    connections: 8,
    keepAliveTimeout: 30_000,
    keepAliveMaxTimeout: 600_000,
    // Every call carries a secret: none goes to a loopback port that another local user took first.
    connect: ownListenerConnector(baseUrl, options.socketPath),
  });

  async function reply<P extends FunctionPath>(path: P, args: CallArgs<P>, callOptions: CallOptions = {}) {
    const spec = findFunction(path);
    if (!spec)
      throw new InvalidArgsError(path, [], `no function at ${path}; \`flowsync functions\` lists them`);
    const baggage: Baggage = args.baggage ?? { trace_id: randomUUID(), traffic_type: trafficType };
    const fullArgs = { ...args, baggage };
    const parsed = spec.args.safeParse(fullArgs);
    if (!parsed.success) {
      const issues = toWireIssues(parsed.error.issues);
      throw new InvalidArgsError(path, issues, describeIssues(issues));
    }
    const credentials = await authFor(spec.access);
    if (!credentials) {
      throw new MissingCredentialsError(
        spec.access === 'admin'
          ? `${path} needs an admin token for ${baseUrl}: run \`flowsync login --admin\`.`
          : `No token for ${baseUrl}: run \`flowsync login\`.`,
      );
    }
    // Over the limits of the spec's platform, the whole call is refused there (and cut off by a gateway): said
    // here, before a byte leaves, with the field at fault, so the agent names it instead of sending it again.
    const over = overSpecLimits(parsed.data);
    if (over) {
      const issues = [{ path: over.path, message: over.message }];
      throw new InvalidArgsError(path, issues, describeIssues(issues));
    }
    const body = JSON.stringify({ args: fullArgs });
    const bodyBytes = Buffer.byteLength(body);
    if (bodyBytes > SPEC_CALL_LIMITS.bodyBytes) {
      const mib = (bytes: number) => `${Math.round((bytes / 1024 / 1024) * 10) / 10} MiB`;
      throw new InvalidArgsError(
        path,
        [],
        `the request is ${mib(bodyBytes)}, over the ${mib(SPEC_CALL_LIMITS.bodyBytes)} a service of the spec takes in one call`,
      );
    }
    const timeoutMs =
      callOptions.timeoutMs ??
      (spec.kind === 'action'
        ? (options.actionTimeoutMs ?? fromEnvironment ?? DEFAULT_ACTION_TIMEOUT_MS)
        : (options.timeoutMs ?? fromEnvironment ?? DEFAULT_TIMEOUT_MS));
    const writer = callOptions.writer ?? options.writer;
    return send(
      spec,
      body,
      authorizationHeader(credentials),
      baggage.trace_id,
      timeoutMs,
      callOptions.signal,
      writer,
    );
  }

  async function send(
    spec: FunctionSpec,
    body: string,
    authorization: string,
    traceId: string,
    timeoutMs: number,
    signal: AbortSignal | undefined,
    writer: string | undefined,
  ): Promise<Reply> {
    const requestPath = `${basePath}${API_PREFIX}${spec.path}`;
    // One deadline for the whole call: a service that answers slowly, trickles its reply or asks to come back
    // later cannot make a caller (the window, a command) wait more than the time-out, whatever it does.
    const deadline = AbortSignal.timeout(timeoutMs);
    const stop = signal ? AbortSignal.any([signal, deadline]) : deadline;
    /** Waits before the next try: false when the deadline comes first; the caller's own abort is thrown. */
    const paused = async (ms: number): Promise<boolean> => {
      try {
        await sleep(ms, undefined, { signal: stop });
        return true;
      } catch (error) {
        if (signal?.aborted) throw signal.reason;
        if (deadline.aborted) return false;
        throw error;
      }
    };
    /** The wait after the `attempt`-th try failed. */
    const backoff = (attempt: number) => backoffDelay(attempt - 1, retry.baseDelayMs, retry.maxDelayMs);
    for (let attempt = 1; ; attempt++) {
      const last = attempt >= retry.attempts;
      let statusCode: number;
      let headers: Record<string, string | string[] | undefined>;
      let text: string | null;
      try {
        const response = await pool.request({
          path: requestPath,
          method: 'POST',
          headers: {
            'content-type': 'application/json',
            authorization,
            // Header values are Latin-1 on the wire: a name outside it is sent percent-encoded.
            ...(writer !== undefined && { 'x-flowsync-writer': headerSafe(writer) }),
          },
          body,
          signal: stop,
        });
        statusCode = response.statusCode;
        headers = response.headers;
        text = await readReply(response.body, headers['content-length']);
      } catch (error) {
        if (signal?.aborted) throw signal.reason;
        const code = deadline.aborted ? 'TIMEOUT' : failureCode(error);
        if (!last && mayRetryFailure(spec.repeat, code) && (await paused(backoff(attempt)))) continue;
        throw transportError(spec.path, code, attempt, timeoutMs, error);
      }
      if (text === null) {
        throw new ProtocolError(
          `The reply from ${baseUrl} to ${spec.path} is larger than ${MAX_REPLY_BYTES / 1024 / 1024} MiB, far more than a flowsync service sends; is the URL a flowsync service?`,
          spec.path,
          statusCode,
        );
      }

      if (!last && mayRetryStatus(spec.repeat, statusCode)) {
        const wait = retryAfterMs(headers['retry-after']) ?? backoff(attempt);
        // Out of time before the next try: the answer at hand is the call's answer.
        if (wait <= MAX_RETRY_AFTER_MS && (await paused(wait))) continue;
      }
      const date = typeof headers.date === 'string' ? headers.date : null;
      return { statusCode, envelope: parseAnswer(spec.path, statusCode, text, traceId), traceId, date };
    }
  }

  function transportError(path: string, code: string, attempts: number, timeoutMs: number, cause: unknown) {
    const tries = attempts > 1 ? ` after ${attempts} attempts` : '';
    const message =
      code === FOREIGN_LISTENER
        ? messageWithCode(cause, FOREIGN_LISTENER)
        : code === 'TIMEOUT'
          ? `No reply from ${baseUrl} to ${path} within ${timeoutMs / 1000} s${tries}; the service is busy or stuck, try again later.`
          : `Cannot reach the service at ${baseUrl} (${code})${tries}: is it running? Start it with \`flowsync serve\` or check the URL.`;
    return new TransportError(message, path, code, attempts, { cause });
  }

  /**
   * The envelope of the answer; a system error of the platform (a `{code, message}` body, or none, with a non-2xx
   * code) is thrown as the RemoteError it is. Anything else cannot be read by the spec: a ProtocolError.
   */
  function parseAnswer(path: string, statusCode: number, text: string, traceId: string): Envelope {
    const ok = statusCode >= 200 && statusCode < 300;
    if (text.trim() === '' && !ok) throw systemError(path, statusCode, undefined, undefined, traceId);
    let json: unknown;
    try {
      json = JSON.parse(text);
    } catch {
      throw new ProtocolError(
        `The reply from ${baseUrl} to ${path} is not JSON (HTTP ${statusCode}); is the URL the service's?`,
        path,
        statusCode,
      );
    }
    const envelope = envelopeSchema.safeParse(json);
    if (envelope.success) return envelope.data;
    const system = systemErrorSchema.safeParse(json);
    if (!ok && system.success)
      throw systemError(path, statusCode, system.data.code, system.data.message, traceId);
    throw new ProtocolError(
      `The reply from ${baseUrl} to ${path} is not an envelope (HTTP ${statusCode}): ${describeIssues(toWireIssues(envelope.error.issues), 'reply')}`,
      path,
      statusCode,
    );
  }

  function systemError(
    path: string,
    statusCode: number,
    code: string | undefined,
    message: string | undefined,
    traceId: string,
  ): RemoteError {
    const words =
      message ??
      (statusCode === 408
        ? `${baseUrl} stopped waiting for the function (HTTP 408, no body); the call may still be running there`
        : `HTTP ${statusCode} with no body; is ${baseUrl} the service's address?`);
    const said = code && message ? `${shortened(words)} (${code})` : shortened(words);
    const answer: AnswerForm = { form: 'system', ...(code !== undefined && { code }) };
    const error = new RemoteError(path, statusCode, said, code ? { code } : {}, traceId, answer);
    // The platform's words for a token it refused say what is wrong, not what to do.
    if (failureKind(error) !== 'unauthorized') return error;
    const signIn = `${said}; sign in again: \`flowsync login\``;
    return new RemoteError(path, statusCode, signIn, code ? { code } : {}, traceId, answer);
  }

  async function call<P extends FunctionPath>(path: P, args: CallArgs<P>, callOptions?: CallOptions) {
    const { statusCode, envelope, traceId } = await reply(path, args, callOptions);
    // The envelope is the truth, the HTTP code a hint: an error envelope is the service's answer whatever the code
    // (the spec's platform sends its functions' failures with 200, its client also takes 560). A success is taken
    // as an acknowledgement only with a 2xx: a success envelope under an error code stored nothing we can trust.
    if (envelope.status !== 'success') throw envelopeError(path, statusCode, envelope, traceId);
    if (statusCode < 200 || statusCode >= 300) {
      throw new ProtocolError(
        `The reply from ${baseUrl} to ${path} is a success envelope with HTTP ${statusCode}: not taken as an acknowledgement.`,
        path,
        statusCode,
      );
    }
    // findFunction cannot miss here: reply() has already looked the path up.
    const value = (findFunction(path) as FunctionSpec).value.safeParse(envelope.value);
    if (!value.success) {
      throw new ProtocolError(
        `The value ${baseUrl} returned for ${path} has the wrong shape: ${describeIssues(toWireIssues(value.error.issues), 'value')}`,
        path,
        statusCode,
        true,
      );
    }
    const tampered = contentNotItsHash(value.data);
    if (tampered !== null) {
      throw new ProtocolError(
        `The service's answer to ${path} gives ${tampered}: the answer is refused and nothing of it is written.`,
        path,
        statusCode,
      );
    }
    return value.data as ValueOf<P>;
  }

  return {
    baseUrl,
    call,
    reply,
    close: () => pool.close(),
    ...groupedMethods(call),
  };
}

/**
 * `[Request ID: <id>] Server Error`, then in development the error's own lines (and a stack): how the spec's
 * platform words every failure but a ConvexError's data (platform-wire.md 1b-1e).
 */
const REQUEST_ID_PREFIX = /^\[Request ID: ([^\]]*)\] Server Error[ \t]*(?:\r?\n([\s\S]*))?$/;

/**
 * An error envelope as a RemoteError with the service's own words: the message without the platform's prefix and
 * stack, or the data a function threw when the message is only the prefix (production). `redacted` when neither
 * says anything.
 */
function envelopeError(path: string, statusCode: number, envelope: Envelope, traceId: string): RemoteError {
  const message = envelope.errorMessage ?? '';
  const prefixed = REQUEST_ID_PREFIX.exec(message);
  const data = envelope.errorData;
  const fields = isRecord(data) ? data : data === undefined || data === null ? {} : { data };
  const fromData =
    typeof data === 'string'
      ? data
      : typeof fields.message === 'string'
        ? fields.message
        : data !== undefined && data !== null
          ? JSON.stringify(data)
          : '';
  if (!prefixed) {
    const words = message || fromData;
    // No message and no data says as little as "Server Error": worth waiting for, not a refusal.
    const answer: AnswerForm = words === '' ? { form: 'envelope', redacted: true } : { form: 'envelope' };
    return new RemoteError(
      path,
      statusCode,
      shortened(words || 'the service gave no message'),
      fields,
      traceId,
      answer,
    );
  }
  const own = (prefixed[2] ?? '')
    .split(/\r?\n/)
    .filter((line) => line.trim() !== '' && !/^\s+at /.test(line))
    .join(' ')
    .replace(/^Uncaught (ConvexError: )?/, '');
  const words = own || fromData;
  const answer: AnswerForm = { form: 'envelope', requestId: prefixed[1] ?? '' };
  if (words === '') answer.redacted = true;
  return new RemoteError(path, statusCode, shortened(words || 'Server Error'), fields, traceId, answer);
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function shortened(message: string): string {
  return message.length > MAX_ERROR_MESSAGE_CHARS ? `${message.slice(0, MAX_ERROR_MESSAGE_CHARS)}…` : message;
}

/**
 * The reply's text, read as it comes and given up at MAX_REPLY_BYTES (null then): the connection is closed at
 * once, so the rest is neither read nor held.
 */
async function readReply(
  body: Dispatcher.ResponseData['body'],
  declaredLength: string | string[] | undefined,
): Promise<string | null> {
  if (Number(declaredLength) > MAX_REPLY_BYTES) {
    body.destroy();
    return null;
  }
  const chunks: Buffer[] = [];
  let bytes = 0;
  for await (const chunk of body as AsyncIterable<Buffer>) {
    bytes += chunk.length;
    if (bytes > MAX_REPLY_BYTES) {
      body.destroy();
      return null;
    }
    chunks.push(chunk);
  }
  return Buffer.concat(chunks, bytes).toString('utf8');
}

/** `FLOWSYNC_TIMEOUT_MS`: a shorter (or longer) time-out for every call, e.g. for a test or a slow link. */
function timeoutFromEnvironment(): number | undefined {
  const value = Number(process.env.FLOWSYNC_TIMEOUT_MS);
  return Number.isFinite(value) && value > 0 ? value : undefined;
}

/** The message of the error (or of a cause of it) that has this code. */
function messageWithCode(error: unknown, code: string): string {
  if ((error as { code?: unknown }).code === code) return (error as Error).message;
  const cause = (error as { cause?: unknown }).cause;
  return cause ? messageWithCode(cause, code) : String(error);
}

/** The code that names why a request failed: a system code, an undici code, or TIMEOUT for our deadline. */
function failureCode(error: unknown): string {
  if (error instanceof DOMException && error.name === 'TimeoutError') return 'TIMEOUT';
  const code = (error as { code?: unknown }).code;
  if (typeof code === 'string') {
    return code === 'UND_ERR_HEADERS_TIMEOUT' || code === 'UND_ERR_BODY_TIMEOUT' ? 'TIMEOUT' : code;
  }
  const cause = (error as { cause?: unknown }).cause;
  return cause ? failureCode(cause) : 'UNKNOWN';
}

/** A header value as sent: printable ASCII kept, anything else percent-encoded (a name may hold any character). */
function headerSafe(value: string): string {
  return value.replace(/[^\x20-\x7e]|%/g, (char) => encodeURIComponent(char));
}
