import type { AgentApi, AgentApiErrorBody, AgentEvent } from '../../src/agent/index.ts';

/** A failed AgentApi call, with the issues of an invalid input when there are some. */
export class ApiError extends Error {
  constructor(readonly body: AgentApiErrorBody) {
    super(body.message);
  }
}

export interface WindowBridge {
  api: AgentApi;
  /** Calls the listener with each pushed event; returns the function that stops it. */
  subscribe(listener: (event: AgentEvent) => void): () => void;
}

type Reply = { ok: boolean; value?: unknown; error?: AgentApiErrorBody };

/** What the Electron preload exposes through contextBridge: AgentApi over IPC, untyped at the boundary. */
interface IpcBridge {
  call(method: string, input: unknown): Promise<Reply>;
  subscribe(listener: (event: AgentEvent) => void): () => void;
}

declare global {
  interface Window {
    /** Set by the Electron preload; absent in a browser, where the loopback bridge serves the same API. */
    flowsync?: IpcBridge;
  }
}

/** The typed AgentApi over any `call(method, input)` that answers with a reply envelope. */
function typedApi(call: (method: string, input: unknown) => Promise<Reply>): AgentApi {
  return new Proxy({} as AgentApi, {
    get: (_target, method: string) => async (input: unknown) => {
      const reply = await call(method, input ?? {});
      if (!reply.ok)
        throw new ApiError(reply.error ?? { code: 'internal', message: 'No answer from the agent.' });
      return reply.value;
    },
  });
}

/** The token the agent printed after `#` in the window's address (kept out of logs and Referer headers). */
export function bridgeToken(): string | null {
  return new URLSearchParams(window.location.hash.slice(1)).get('token');
}

function loopbackBridge(token: string): WindowBridge {
  const api = new Proxy({} as AgentApi, {
    get: (_target, method: string) => async (input: unknown) => {
      const response = await fetch(`/api/${method}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
        body: JSON.stringify(input ?? {}),
      });
      const reply = (await response.json()) as { ok: boolean; value?: unknown; error?: AgentApiErrorBody };
      if (!reply.ok)
        throw new ApiError(reply.error ?? { code: 'internal', message: `HTTP ${response.status}` });
      return reply.value;
    },
  });
  return {
    api,
    subscribe(listener) {
      // EventSource cannot send a header: the event stream is the one route that takes the token in the query.
      const source = new EventSource(`/api/events?token=${encodeURIComponent(token)}`);
      // Every event type the agent pushes (status, activity), each a server-sent event of its own name.
      const forward = (message: Event) => listener(JSON.parse((message as MessageEvent<string>).data));
      for (const type of ['status', 'activity'] as const) source.addEventListener(type, forward);
      return () => source.close();
    },
  };
}

/** The AgentApi of this window: Electron's IPC bridge when present, else the loopback bridge. */
export function connect(): WindowBridge | null {
  const ipc = window.flowsync;
  if (ipc) return { api: typedApi((method, input) => ipc.call(method, input)), subscribe: ipc.subscribe };
  const token = bridgeToken();
  return token ? loopbackBridge(token) : null;
}
