import { ERROR_REASONS, conflictSchema, type Conflict, type ErrorReason } from '../protocol/index.ts';
import {
  InvalidArgsError,
  MissingCredentialsError,
  ProtocolError,
  RemoteError,
  TransportError,
} from './errors.ts';

/**
 * What a failed call means to the code that made it, decided once for every caller (the sync engine, the agent's
 * API, the CLI):
 * - `unreachable`: no answer (down, refused connection, time-out, 408): try again soon, the service may be back.
 * - `throttled`, `server`: it answered 429 or 5xx, or something that is not a flowsync answer: back off. A 404 is
 *   one of those: the client calls only functions of the table (a flowsync service answers each), so a 404 comes
 *   from a gateway whose route is missing for now ("unknown function" while a deploy rolls), never a refusal.
 * - `unauthorized`: 401/403 or no token at hand: a person must sign in; retrying changes nothing.
 * - `refused`: the service read the call and said no (400, 413, 422): the content must change first.
 * - `invalid`: our own schema refused the args; nothing was sent.
 */
export type FailureKind = 'unreachable' | 'throttled' | 'server' | 'unauthorized' | 'refused' | 'invalid';

export function failureKind(error: unknown): FailureKind | null {
  if (error instanceof TransportError) return 'unreachable';
  if (error instanceof ProtocolError) return 'server';
  if (error instanceof InvalidArgsError) return 'invalid';
  if (error instanceof MissingCredentialsError) return 'unauthorized';
  if (!(error instanceof RemoteError)) return null;
  const status = error.statusCode;
  if (status === 401 || status === 403) return 'unauthorized';
  if (status === 408) return 'unreachable';
  if (status === 429) return 'throttled';
  if (status >= 500 || status === 404) return 'server';
  return 'refused';
}

/** Whether the same call may go through later as it is. */
export function isRetryable(kind: FailureKind | null): boolean {
  return kind === 'unreachable' || kind === 'throttled' || kind === 'server';
}

/**
 * The spec's reason for the service's answer, read from its HTTP code (the client already refused a reply whose
 * envelope disagrees with it), or null for anything that is not such an answer. Callers that must tell one refusal
 * from another (a user token where an admin token was needed, a file id the service lost) ask this, so that HTTP
 * codes are read in this file only.
 */
export function reasonOf(error: unknown): ErrorReason | null {
  if (!(error instanceof RemoteError)) return null;
  return (ERROR_REASONS as Partial<Record<number, ErrorReason>>)[error.statusCode] ?? null;
}

/**
 * The conflict a refusal carries (a write on a stale base: 422 with `reason: conflict`), or null for any other
 * failure: the file's service version is not the one the write was based on, and nothing was written.
 */
export function conflictOf(error: unknown): Conflict | null {
  if (!(error instanceof RemoteError) || reasonOf(error) !== 'refused') return null;
  if (error.errorData.reason !== 'conflict') return null;
  const parsed = conflictSchema.safeParse(error.errorData.conflict);
  return parsed.success ? parsed.data : null;
}
