import type { WireIssue } from '../protocol/index.ts';

/** How a service's failure answer came: what failureKind reads besides the HTTP code. */
export interface AnswerForm {
  /**
   * `envelope`: an error envelope, the answer of the function (or of flowsync's service, which sends only those);
   * `system`: a `{code, message}` body, or none, the answer of the platform around the functions (its token check,
   * its body limit, its overload and time-out layers: platform-wire.md, "Two reply shapes").
   */
  form: 'envelope' | 'system';
  /** The platform's word for a system error (`TooManyConcurrentRequests`, `BadJsonBody`, `InvalidAdminKey`). */
  code?: string;
  /**
   * The envelope says only "[Request ID: …] Server Error" (the platform's production answer to any plain error):
   * the service did not say what went wrong, so it is no refusal of the content.
   */
  redacted?: boolean;
  /** The platform's request id, from `[Request ID: …]` (it sends no header with it). */
  requestId?: string;
}

/** The service answered, and not with a success: an error envelope, or a system error of its platform. */
export class RemoteError extends Error {
  override readonly name = 'RemoteError';
  constructor(
    readonly path: string,
    readonly statusCode: number,
    readonly errorMessage: string,
    readonly errorData: Record<string, unknown>,
    readonly traceId: string,
    readonly answer: AnswerForm = { form: 'envelope' },
  ) {
    super(`${remoteSummary(path, statusCode, errorMessage, answer)} [trace ${traceId}]`);
  }

  /** `errorData.reason`, e.g. `invalid_request`, `forbidden`, `unknown_api_key`. */
  get reason(): string | undefined {
    return typeof this.errorData.reason === 'string' ? this.errorData.reason : undefined;
  }
}

/** The line that says what the service answered: a refusal in its words, or the failure it reported. */
function remoteSummary(path: string, statusCode: number, errorMessage: string, answer: AnswerForm): string {
  const request = answer.requestId ? ` [Request ID: ${answer.requestId}]` : '';
  if (answer.redacted)
    return `${path} failed on the service ("Server Error", with no more said; HTTP ${statusCode})${request}`;
  if (answer.form === 'system') return `${path}: the service answered HTTP ${statusCode}: ${errorMessage}`;
  // A function's answer with 200 (or 560, the platform's "function failed") says nothing more by its code.
  const code = statusCode < 300 || statusCode === 560 ? '' : ` (HTTP ${statusCode})`;
  return `${path} refused${code}: ${errorMessage}${request}`;
}

/** The call did not get an answer: the service is down, unreachable, or too slow. */
export class TransportError extends Error {
  override readonly name = 'TransportError';
  constructor(
    message: string,
    readonly path: string,
    /** The system or undici error code (`ECONNREFUSED`, `UND_ERR_HEADERS_TIMEOUT`, `TIMEOUT`, …). */
    readonly code: string,
    readonly attempts: number,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

/** The answer cannot be read by the spec: not JSON, neither an envelope nor a system error, or a value of the wrong shape. */
export class ProtocolError extends Error {
  override readonly name = 'ProtocolError';
  constructor(
    message: string,
    readonly path: string,
    readonly statusCode: number,
    /** A success envelope whose value has another shape than ours: the service answered, in its own terms. */
    readonly otherValue = false,
  ) {
    super(message);
  }
}

/**
 * A refusal that carried the service's repository config, over the cap a file may be (repoConfigOverCap): not
 * taken. The same file sent again gets the same answer, so it is not sent again until it changes.
 */
export class RepoConfigTooLargeError extends ProtocolError {}

/** The args do not fit the function's schema; nothing was sent. */
export class InvalidArgsError extends Error {
  override readonly name = 'InvalidArgsError';
  constructor(
    readonly path: string,
    readonly issues: WireIssue[],
    description: string,
  ) {
    super(`Invalid args for ${path}: ${description}`);
  }
}

/** No token for what the function needs; nothing was sent. */
export class MissingCredentialsError extends Error {
  override readonly name = 'MissingCredentialsError';
}
