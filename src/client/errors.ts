import type { WireIssue } from '../protocol/index.ts';

/** The service answered with an error envelope: it received the call and refused it. */
export class RemoteError extends Error {
  override readonly name = 'RemoteError';
  constructor(
    readonly path: string,
    readonly statusCode: number,
    readonly errorMessage: string,
    readonly errorData: Record<string, unknown>,
    readonly traceId: string,
  ) {
    super(`${path} refused (HTTP ${statusCode}): ${errorMessage} [trace ${traceId}]`);
  }

  /** `errorData.reason`, e.g. `invalid_request`, `forbidden`, `unknown_api_key`. */
  get reason(): string | undefined {
    return typeof this.errorData.reason === 'string' ? this.errorData.reason : undefined;
  }
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

/** The answer is not what a flowsync service sends: not JSON, not an envelope, or a value of the wrong shape. */
export class ProtocolError extends Error {
  override readonly name = 'ProtocolError';
  constructor(
    message: string,
    readonly path: string,
    readonly statusCode: number,
  ) {
    super(message);
  }
}

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
