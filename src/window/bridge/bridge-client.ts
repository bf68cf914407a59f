import { request, type IncomingMessage } from 'node:http';
import { setTimeout as sleep } from 'node:timers/promises';
import { inPrivateFolder, type AgentBridgeAddress } from '../../host/index.ts';
import { AGENT_API, AgentApiError, readReply, type AgentApiMethod, type AgentEvent } from '../contract.ts';

export interface BridgeClient {
  /** Calls one AgentApi method through the bridge; throws AgentApiError on a refusal. */
  call(method: string, input: unknown): Promise<unknown>;
  /** Follows the bridge's status stream until the returned function is called. */
  subscribe(listener: (event: AgentEvent) => void): () => void;
  /** A new address that opens the agent's window once (the agent token may ask for it; a window may not). */
  launchUrl(): Promise<string>;
}

export interface BridgeClientOptions {
  /** Called before a call whose connection dropped is sent again (the CLI says so on stderr): `attempt` of `of`. */
  onRetry?: (attempt: number, of: number) => void;
}

/** Nothing answered: the agent is not there (nothing listens), or it dropped the connection every time. */
export class AgentNotAnswering extends AgentApiError {
  constructor(message: string) {
    super('unavailable', message);
  }
}

/** Tries of one call whose connection drops before any answer, and the pauses between them. */
const RETRY_PAUSES_MS = [100, 400, 1000];

/**
 * Whether a connection error is a drop of a connection that was made (a reset, a close before the answer, a full
 * queue on the socket): a server over its cap closes connections (connection-limits.ts, the user's own newest
 * only past 128 of them), so the call is sent again. Nothing listening (ECONNREFUSED, ENOENT) is no drop.
 */
function dropped(error: unknown): boolean {
  const code = (error as NodeJS.ErrnoException).code;
  return code === 'ECONNRESET' || code === 'EPIPE' || code === 'EAGAIN';
}

/**
 * AgentApi over the loopback bridge, from Node: what the CLI and the Electron main process use, so that the agent
 * (and its native modules, built for Node) runs in its own Node process and the desktop shell stays glue. Through
 * the bridge's private Unix socket when the agent lock names one in a folder only this user enters (no other user
 * can crowd it), else over the window's port: its name (`<random>.localhost`, which browsers resolve and the OS's
 * resolver may not) is sent as the Host, to a loopback address. node:http, not fetch or undici: `flowsync status`
 * asks the running agent through this, and that command stays light (the package test holds it to SQLite alone).
 * A call whose connection drops is sent again, up to four times, and `onRetry` says so; what still fails is an
 * AgentNotAnswering ('unavailable'), a line of its own, never an incident.
 */
export function connectToBridge(
  agent: string | AgentBridgeAddress,
  options: BridgeClientOptions = {},
): BridgeClient {
  const { bridge, socket } = typeof agent === 'string' ? { bridge: agent, socket: null } : agent;
  const url = new URL(bridge);
  const token = new URLSearchParams(url.hash.slice(1)).get('token') ?? '';
  const headers = { host: url.host, authorization: `Bearer ${token}` };
  const privately = socket !== null && inPrivateFolder(socket) ? socket : null;
  const hostname = url.hostname.replace(/^\[|\]$/g, '');
  const target = privately
    ? { socketPath: privately }
    : {
        host: hostname === 'localhost' || hostname.endsWith('.localhost') ? '127.0.0.1' : hostname,
        port: Number(url.port) || 80,
      };
  const where = privately ?? url.origin;

  const send = (path: string, init: { method: 'GET' | 'POST'; body?: string }) =>
    new Promise<IncomingMessage>((resolve, reject) => {
      const sent = request(
        {
          ...target,
          path,
          method: init.method,
          headers: init.body === undefined ? headers : { ...headers, 'content-type': 'application/json' },
        },
        resolve,
      );
      sent.on('error', reject);
      sent.end(init.body);
    });

  const post = async (path: string, input: unknown) => {
    const body = JSON.stringify(input ?? {});
    for (let attempt = 1; ; attempt++) {
      let status: number;
      let text = '';
      try {
        const response = await send(`/api/${path}`, { method: 'POST', body });
        status = response.statusCode ?? 0;
        for await (const chunk of response) text += String(chunk);
      } catch (error) {
        if (!dropped(error)) {
          throw new AgentNotAnswering(
            `The flowsync agent does not answer at ${where} (${(error as NodeJS.ErrnoException).code ?? (error as Error).message}): is it still running?`,
          );
        }
        if (attempt > RETRY_PAUSES_MS.length) {
          throw new AgentNotAnswering(
            `The flowsync agent dropped the connection ${attempt} times in a row (at ${where}): try again.`,
          );
        }
        options.onRetry?.(attempt + 1, RETRY_PAUSES_MS.length + 1);
        await sleep(RETRY_PAUSES_MS[attempt - 1]);
        continue;
      }
      let received: unknown = null;
      try {
        received = JSON.parse(text);
      } catch {
        // not an answer of the bridge's: readReply says which status it was
      }
      const reply = readReply(received, `HTTP ${status}`);
      if (!reply.ok) throw new AgentApiError(reply.error.code, reply.error.message, reply.error.issues);
      return reply.value;
    }
  };
  return {
    async call(method, input) {
      if (!Object.hasOwn(AGENT_API, method)) throw new AgentApiError('not_found', `No method ${method}.`);
      return post(method as AgentApiMethod, input);
    },
    async launchUrl() {
      return ((await post('launch', {})) as { url: string }).url;
    },
    subscribe(listener) {
      let stopped = false;
      let response: IncomingMessage | undefined;
      void (async () => {
        // Node can send a header on the event stream too, so the token stays out of the URL here as well.
        response = await send('/api/events', { method: 'GET' });
        if (stopped) return response.destroy();
        let buffer = '';
        response.setEncoding('utf8');
        for await (const chunk of response) {
          buffer += String(chunk);
          let end: number;
          while ((end = buffer.indexOf('\n\n')) >= 0) {
            const message = buffer.slice(0, end);
            buffer = buffer.slice(end + 2);
            const data = message.split('\n').find((line) => line.startsWith('data: '));
            if (data) listener(JSON.parse(data.slice(6)) as AgentEvent);
          }
        }
      })().catch((error: unknown) => {
        // Unsubscribed, or the agent went away mid-stream (a connection error): the caller's reconnect says so. A
        // malformed event is a bug, logged; the log is loaded only then: `flowsync status` reaches the agent
        // through this module, and must not load the log (pino) at every run.
        if (stopped || (error as NodeJS.ErrnoException).code !== undefined) return;
        void import('../../host/index.ts').then(({ reportIncident }) =>
          reportIncident(error, { during: 'reading the agent’s events' }),
        );
      });
      return () => {
        stopped = true;
        response?.destroy();
      };
    },
  };
}

/**
 * Whether an agent answers at this window address (the agent lock's check for a live-looking owner on systems
 * without process start times): a refusal is still an answer from the agent; nothing listening is not.
 */
export async function bridgeAnswers(agent: string | AgentBridgeAddress): Promise<boolean> {
  try {
    await connectToBridge(agent).call('status', {});
    return true;
  } catch (error) {
    return error instanceof AgentApiError && !(error instanceof AgentNotAnswering);
  }
}
