import type { FunctionPath, ValueOf } from '../protocol/index.ts';
import { valueOfAnswer } from './answer.ts';
import { toAuthProvider, type ClientAuth } from './auth.ts';
import { groupedMethods, type CallArgs, type CallOptions, type GroupedMethods } from './methods.ts';
import { outgoingCall, timeoutFromEnvironment } from './request.ts';
import { DEFAULT_RETRY, type RetryOptions } from './retry.ts';
import { openTransport, type Reply } from './transport.ts';

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

export interface RemoteClient extends GroupedMethods {
  readonly baseUrl: string;
  /** Calls a function and returns its value; throws RemoteError, TransportError, ProtocolError or InvalidArgsError. */
  call<P extends FunctionPath>(path: P, args: CallArgs<P>, options?: CallOptions): Promise<ValueOf<P>>;
  /** Like `call`, but an error envelope is returned, not thrown (for `flowsync call --raw`). */
  reply<P extends FunctionPath>(path: P, args: CallArgs<P>, options?: CallOptions): Promise<Reply>;
  close(): Promise<void>;
}

/**
 * A client of one service: each call checked and made ready (request.ts), sent with its retries (transport.ts), and
 * its answer read as the spec says (answer.ts); one method per function besides (methods.ts).
 */
export function createClient(options: ClientOptions): RemoteClient {
  const base = new URL(options.baseUrl);
  if (base.protocol !== 'http:' && base.protocol !== 'https:') {
    throw new TypeError(`The service URL must start with http:// or https:// (got ${base.protocol}).`);
  }
  const baseUrl = options.baseUrl.replace(/\/+$/, '');
  const settings = {
    baseUrl,
    authFor: toAuthProvider(options.auth),
    trafficType: options.trafficType ?? 'external',
    timeoutMs: options.timeoutMs,
    actionTimeoutMs: options.actionTimeoutMs,
    fromEnvironment: timeoutFromEnvironment(),
    writer: options.writer,
  };
  const retry = { ...DEFAULT_RETRY, ...options.retry };
  const transport = openTransport({ base, baseUrl, retry, socketPath: options.socketPath });

  async function reply<P extends FunctionPath>(path: P, args: CallArgs<P>, callOptions: CallOptions = {}) {
    return transport.send(await outgoingCall(settings, path, args, callOptions));
  }

  async function call<P extends FunctionPath>(path: P, args: CallArgs<P>, callOptions?: CallOptions) {
    return valueOfAnswer(baseUrl, path, await reply(path, args, callOptions));
  }

  return {
    baseUrl,
    call,
    reply,
    close: () => transport.close(),
    ...groupedMethods(call),
  };
}
