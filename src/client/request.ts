import { randomUUID } from 'node:crypto';
import {
  describeIssues,
  findFunction,
  overSpecLimits,
  SPEC_CALL_LIMITS,
  toWireIssues,
  type Baggage,
  type FunctionPath,
  type FunctionSpec,
} from '../protocol/index.ts';
import { authorizationHeader, type AuthProvider } from './auth.ts';
import { InvalidArgsError, MissingCredentialsError } from './errors.ts';
import type { CallArgs, CallOptions } from './methods.ts';

const DEFAULT_TIMEOUT_MS = 30_000;
const DEFAULT_ACTION_TIMEOUT_MS = 120_000;

/** A call ready to go out: its args checked against the spec, its credentials found, its time-out chosen. */
export interface OutgoingCall {
  spec: FunctionSpec;
  body: string;
  authorization: string;
  traceId: string;
  timeoutMs: number;
  signal: AbortSignal | undefined;
  writer: string | undefined;
}

/** What every call of one client shares (see ClientOptions). */
export interface RequestSettings {
  baseUrl: string;
  authFor: AuthProvider;
  trafficType: string;
  timeoutMs: number | undefined;
  actionTimeoutMs: number | undefined;
  /** FLOWSYNC_TIMEOUT_MS as it was when the client was made. */
  fromEnvironment: number | undefined;
  writer: string | undefined;
}

/** The call as it will be sent; refused here, before a byte leaves, when the service would refuse it anyway. */
export async function outgoingCall<P extends FunctionPath>(
  settings: RequestSettings,
  path: P,
  args: CallArgs<P>,
  callOptions: CallOptions,
): Promise<OutgoingCall> {
  const spec = findFunction(path);
  if (!spec)
    throw new InvalidArgsError(path, [], `no function at ${path}; \`flowsync functions\` lists them`);
  const baggage: Baggage = args.baggage ?? { trace_id: randomUUID(), traffic_type: settings.trafficType };
  const fullArgs = { ...args, baggage };
  const parsed = spec.args.safeParse(fullArgs);
  if (!parsed.success) {
    const issues = toWireIssues(parsed.error.issues);
    throw new InvalidArgsError(path, issues, describeIssues(issues));
  }
  const credentials = await settings.authFor(spec.access);
  if (!credentials) {
    throw new MissingCredentialsError(
      spec.access === 'admin'
        ? `${path} needs an admin token for ${settings.baseUrl}: run \`flowsync login --admin\`.`
        : `No token for ${settings.baseUrl}: run \`flowsync login\`.`,
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
  return {
    spec,
    body,
    authorization: authorizationHeader(credentials),
    traceId: baggage.trace_id,
    timeoutMs: callOptions.timeoutMs ?? defaultTimeout(settings, spec),
    signal: callOptions.signal,
    writer: callOptions.writer ?? settings.writer,
  };
}

function defaultTimeout(settings: RequestSettings, spec: FunctionSpec): number {
  return spec.kind === 'action'
    ? (settings.actionTimeoutMs ?? settings.fromEnvironment ?? DEFAULT_ACTION_TIMEOUT_MS)
    : (settings.timeoutMs ?? settings.fromEnvironment ?? DEFAULT_TIMEOUT_MS);
}

/** `FLOWSYNC_TIMEOUT_MS`: a shorter (or longer) time-out for every call, e.g. for a test or a slow link. */
export function timeoutFromEnvironment(): number | undefined {
  const value = Number(process.env.FLOWSYNC_TIMEOUT_MS);
  return Number.isFinite(value) && value > 0 ? value : undefined;
}
