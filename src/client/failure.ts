import {
  ERROR_REASONS,
  conflictSchema,
  repoConfigCurrentSchema,
  repoConfigOverCap,
  type Conflict,
  type ErrorReason,
  type RepoConfigCurrent,
} from '../protocol/index.ts';
import {
  InvalidArgsError,
  MissingCredentialsError,
  ProtocolError,
  RemoteError,
  RepoConfigTooLargeError,
  TransportError,
} from './errors.ts';

/**
 * What a failed call means to the code that made it, decided once for every caller (the sync engine, the agent's
 * API, the CLI), from the answer first and its HTTP code second (docs/architecture.md, "How a service's answers are
 * read"):
 * - `refused`: the service read the call and said no, in words: an error envelope of the function (with 200 or 560,
 *   as the spec's platform sends them; 400, 413, 422 from flowsync's own service), or a `{code, message}` 400 about
 *   the request (a body over its limit). A person must act (the content, the function asked): retrying changes
 *   nothing, so the flow is named with the service's words and the others go on.
 * - `server`, `throttled`: worth waiting for. An envelope that says only "[Request ID: …] Server Error" (the
 *   platform hides every plain error in production: a bug, a limit, a passing fault; it cannot be told which), 5xx
 *   (503: the platform's own retries of a write conflict ran out, nothing committed), 429, or a 404 (a route missing
 *   for now, or a wrong address): back off, bounded; a flow that keeps failing alone is isolated by the uploader's
 *   bisection and named.
 * - `unreachable`: no answer (down, refused connection, time-out), or 408 (the platform's time-out layer): try again.
 * - `unauthorized`: 401/403, a 400 about the Authorization header, or no token at hand: a person must sign in. A
 *   403 that names the role it needed (flowsync's members) is `refused`: the member's role, not their sign-in.
 * - `invalid`: our own check of the args (the schema, the platform's limits) refused them; nothing was sent.
 */
export type FailureKind = 'unreachable' | 'throttled' | 'server' | 'unauthorized' | 'refused' | 'invalid';

/** The platform's 400 codes about the Authorization header (an unknown scheme word is 400, not 401). */
const AUTH_HEADER_CODES = new Set([
  'InvalidAdminKey',
  'InvalidHeaderFailure',
  'InvalidAuthHeader',
  'BadAdminKey',
]);

export function failureKind(error: unknown): FailureKind | null {
  if (error instanceof TransportError) return 'unreachable';
  if (error instanceof ProtocolError) return 'server';
  if (error instanceof InvalidArgsError) return 'invalid';
  if (error instanceof MissingCredentialsError) return 'unauthorized';
  if (!(error instanceof RemoteError)) return null;
  const status = error.statusCode;
  if (error.answer.form === 'envelope' && (status < 300 || status === STATUS_UDF_FAILED))
    return error.answer.redacted ? 'server' : 'refused';
  if (error.answer.redacted) return 'server';
  // A member whose role does not allow the function (a read-only member's write): the service's sentence
  // says what to do, and signing in again would change nothing.
  if (status === 403 && error.errorData.needed !== undefined) return 'refused';
  if (status === 401 || status === 403) return 'unauthorized';
  if (status === 400 && AUTH_HEADER_CODES.has(error.answer.code ?? '')) return 'unauthorized';
  if (status === 408) return 'unreachable';
  if (status === 429) return 'throttled';
  if (status >= 500 || status === 404) return 'server';
  return 'refused';
}

/** Why a member's token no longer opens the service: the service's 401 says it, with when. */
export interface CredentialRefusal {
  credential: 'removed' | 'revoked' | 'expired';
  /** When it happened, as the service said (null: it did not say). */
  at: string | null;
}

/**
 * The member's token is over (removed, revoked, expired), or null for any other failure: a 401 whose `errorData`
 * names the credential's end. Nothing but a new sign-in changes it, so the agent stops calling rather than retry.
 */
export function credentialRefusal(error: unknown): CredentialRefusal | null {
  if (!(error instanceof RemoteError) || error.statusCode !== 401) return null;
  const { credential, at } = error.errorData;
  if (credential !== 'removed' && credential !== 'revoked' && credential !== 'expired') return null;
  return { credential, at: typeof at === 'string' ? at : null };
}

/**
 * How often an agent whose token is over calls its service: once a minute, to notice a new sign-in (its keychain is
 * read at each call), never a retry loop.
 */
export const SIGNED_OUT_RECHECK_MS = 60_000;

/** The platform's "the function failed" code, which its own client reads as 200 (platform-wire.md, 560). */
const STATUS_UDF_FAILED = 560;

/** Whether the same call may go through later as it is. */
export function isRetryable(kind: FailureKind | null): boolean {
  return kind === 'unreachable' || kind === 'throttled' || kind === 'server';
}

/**
 * flowsync's service's reason for its answer, read from its HTTP code (ERROR_REASONS), or null for anything that is
 * not such an answer (a function's answer with 200 or 560 carries no reason in its code). The platform's 400 for a
 * body over its limit is `body_too_large`, as our 413. Callers that must tell one refusal from another (a user token
 * where an admin token was needed, a file id the service lost) ask this, so that HTTP codes are read in this file.
 */
export function reasonOf(error: unknown): ErrorReason | null {
  if (!(error instanceof RemoteError)) return null;
  const { statusCode, answer } = error;
  if (answer.code === 'BadJsonBody' && /length limit/i.test(error.errorMessage)) return 'body_too_large';
  if (statusCode < 300 || statusCode === STATUS_UDF_FAILED) return null;
  return (ERROR_REASONS as Partial<Record<number, ErrorReason>>)[statusCode] ?? null;
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

/**
 * The service's repository config a refusal carries (an update on a stale `base_hash`: 422 with `reason: conflict`),
 * or null for any other failure: the service holds another config than the one the write was based on, and kept it.
 * A config over the cap a file may be (repoConfigOverCap) is thrown (RepoConfigTooLargeError), never taken.
 */
export function repoConfigConflictOf(error: unknown): RepoConfigCurrent | null {
  if (!(error instanceof RemoteError) || reasonOf(error) !== 'refused') return null;
  if (error.errorData.reason !== 'conflict') return null;
  // Over the cap a file may be: refused here, in words, rather than taken for no conflict (a refusal to send again).
  const over = repoConfigOverCap(error.errorData.repo_config);
  if (over !== null)
    throw new RepoConfigTooLargeError(
      `The service's answer to ${error.path} gives its repository config, which ${over}: it is not taken, and yours is not sent.`,
      error.path,
      error.statusCode,
    );
  const parsed = repoConfigCurrentSchema.safeParse(error.errorData.repo_config);
  return parsed.success ? parsed.data : null;
}

/**
 * ` (HTTP 422)` to follow the service's words where its code says something (flowsync's service), nothing for a
 * function's answer with 200 or 560 (the spec's platform), whose code says only that it answered.
 */
export function statusNote(error: RemoteError): string {
  const { statusCode } = error;
  return statusCode < 300 || statusCode === STATUS_UDF_FAILED ? '' : ` (HTTP ${statusCode})`;
}
