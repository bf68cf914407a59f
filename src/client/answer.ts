import {
  describeIssues,
  envelopeSchema,
  findFunction,
  systemErrorSchema,
  toWireIssues,
  type Envelope,
  type FunctionPath,
  type FunctionSpec,
  type ValueOf,
} from '../protocol/index.ts';
import { contentNotItsHash } from './content-hash.ts';
import { ProtocolError, RemoteError, type AnswerForm } from './errors.ts';
import { failureKind } from './failure.ts';

/**
 * The most of a service's error message the client keeps. A flowsync service's longest are a few paths of at most
 * 1,024 characters and five schema issues (describeIssues); a longer one would be stored in the state for each
 * refused flow and printed by every `flowsync status`.
 */
const MAX_ERROR_MESSAGE_CHARS = 4_000;

/** An answer as `call` takes it: the HTTP code and the envelope. */
interface Answer {
  statusCode: number;
  envelope: Envelope;
  traceId: string;
}

/**
 * The envelope of the answer; a system error of the platform (a `{code, message}` body, or none, with a non-2xx
 * code) is thrown as the RemoteError it is. Anything else cannot be read by the spec: a ProtocolError.
 */
export function parseAnswer(
  baseUrl: string,
  path: string,
  statusCode: number,
  text: string,
  traceId: string,
): Envelope {
  const ok = statusCode >= 200 && statusCode < 300;
  if (text.trim() === '' && !ok) throw systemError(baseUrl, path, statusCode, undefined, undefined, traceId);
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
    throw systemError(baseUrl, path, statusCode, system.data.code, system.data.message, traceId);
  throw new ProtocolError(
    `The reply from ${baseUrl} to ${path} is not an envelope (HTTP ${statusCode}): ${describeIssues(toWireIssues(envelope.error.issues), 'reply')}`,
    path,
    statusCode,
  );
}

function systemError(
  baseUrl: string,
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

/** The function's value in the answer, checked against the spec; a failure or a doubtful success is thrown. */
export function valueOfAnswer<P extends FunctionPath>(
  baseUrl: string,
  path: P,
  { statusCode, envelope, traceId }: Answer,
): ValueOf<P> {
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
