import { setTimeout as sleep } from 'node:timers/promises';
import type { Dispatcher, Pool as UndiciPool } from 'undici';
import { Pool } from './undici-parts.ts';
import { API_PREFIX, type Envelope } from '../protocol/index.ts';
import { parseAnswer } from './answer.ts';
import { TransportError, ProtocolError } from './errors.ts';
import { FOREIGN_LISTENER, ownListenerConnector } from './listener-owner.ts';
import type { OutgoingCall } from './request.ts';
import { backoffDelay, mayRetryFailure, mayRetryStatus, retryAfterMs, type RetryOptions } from './retry.ts';

/** An answer from the service: the HTTP code and the envelope, success or not (a system error is thrown). */
export interface Reply {
  statusCode: number;
  envelope: Envelope;
  traceId: string;
  /** The service's clock when it answered (its HTTP Date header, to the second); null when it sent none. */
  date: string | null;
}

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

/** Where the calls go: the service's address (its origin and path prefix) and how often a call is tried. */
export interface TransportOptions {
  base: URL;
  /** The address as given, without its trailing slashes, for the messages. */
  baseUrl: string;
  retry: RetryOptions;
  socketPath?: string;
}

/** Sends a call to the service and reads its reply, trying again as the function's repeat policy allows. */
export interface Transport {
  send(call: OutgoingCall): Promise<Reply>;
  close(): Promise<void>;
}

export function openTransport({ base, baseUrl, retry, socketPath }: TransportOptions): Transport {
  const basePath = base.pathname.replace(/\/+$/, '');
  // One keep-alive pool per client: a sync of thousands of files reuses a handful of connections.
  const pool = new Pool(base.origin, {
    connections: 8,
    keepAliveTimeout: 30_000,
    keepAliveMaxTimeout: 600_000,
    // Every call carries a secret: none goes to a loopback port that another local user took first.
    connect: ownListenerConnector(baseUrl, socketPath),
  });
  return {
    send: (call) => send(pool, { baseUrl, basePath, retry }, call),
    close: () => pool.close(),
  };
}

async function send(
  pool: UndiciPool,
  { baseUrl, basePath, retry }: { baseUrl: string; basePath: string; retry: RetryOptions },
  { spec, body, authorization, traceId, timeoutMs, signal, writer }: OutgoingCall,
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
      throw transportError(baseUrl, spec.path, code, attempt, timeoutMs, error);
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
    return {
      statusCode,
      envelope: parseAnswer(baseUrl, spec.path, statusCode, text, traceId),
      traceId,
      date,
    };
  }
}

function transportError(
  baseUrl: string,
  path: string,
  code: string,
  attempts: number,
  timeoutMs: number,
  cause: unknown,
) {
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
