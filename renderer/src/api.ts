import type { AgentApi, AgentApiErrorBody, AgentEvent, AgentReply } from '../../src/window/index.ts';

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

type Reply = AgentReply;

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
      if (!reply.ok) throw new ApiError(reply.error);
      return reply.value;
    },
  });
}

/** Where the page keeps its session: it survives a reload of this tab, and no other tab or window sees it. */
const SESSION_KEY = 'flowsync.session';

/** Why this page has no session; the window shows it in place of the app. */
export class NoSession extends Error {}

/**
 * The session of this page. Opened from a launch address (`#token=…`, single-use, after `#` so no request line or
 * Referer carries it), the page takes the token out of the address bar and this history entry at once, before
 * anything else runs, then trades it for a session credential. A reload finds the session in sessionStorage;
 * a new tab has none, and `flowsync ui --open` opens one.
 */
export async function windowSession(): Promise<string> {
  const launch = new URLSearchParams(window.location.hash.slice(1)).get('token');
  if (launch === null) {
    const kept = sessionStorage.getItem(SESSION_KEY);
    if (kept) return kept;
    throw new NoSession(
      'This address has no token: run `flowsync ui --open` to open the window (or open the address it prints).',
    );
  }
  history.replaceState(history.state, '', window.location.pathname + window.location.search);
  const response = await fetch('/api/session', {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ launch }),
  });
  const reply = await readReply(response);
  if (!reply.ok) throw new NoSession(reply.error.message);
  const { session } = reply.value as { session: string };
  sessionStorage.setItem(SESSION_KEY, session);
  return session;
}

/**
 * The bridge's answer (the contract's AgentReply); a body that is not one (a cut-off reply, a proxy's page) is an
 * `internal` error naming the HTTP status. The page imports the contract's types only (its schemas would bring
 * the agent's modules into the browser bundle), so the check is the shape's two cases.
 */
async function readReply(response: Response): Promise<AgentReply> {
  const body = (await response.json().catch(() => null)) as Partial<AgentReply> | null;
  if (body?.ok === true) return body as AgentReply;
  if (body?.ok === false && body.error) return body as AgentReply;
  return { ok: false, error: { code: 'internal', message: `HTTP ${response.status}` } };
}

function loopbackBridge(session: string): WindowBridge {
  const api = new Proxy({} as AgentApi, {
    get: (_target, method: string) => async (input: unknown) => {
      const response = await fetch(`/api/${method}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${session}` },
        body: JSON.stringify(input ?? {}),
      });
      const reply = await readReply(response);
      if (!reply.ok) throw new ApiError(reply.error);
      return reply.value;
    },
  });
  return {
    api,
    subscribe(listener) {
      // EventSource cannot send a header: the event stream is the one route that takes the session in the query
      // (a request of the page's own, which no history, Referer or log of ours keeps).
      const source = new EventSource(`/api/events?token=${encodeURIComponent(session)}`);
      // Every event type the agent pushes (status, activity), each a server-sent event of its own name.
      const forward = (message: Event) => listener(JSON.parse((message as MessageEvent<string>).data));
      for (const type of ['status', 'activity'] as const) source.addEventListener(type, forward);
      return () => source.close();
    },
  };
}

/** The AgentApi of this window: Electron's IPC bridge when present, else the loopback bridge (NoSession if none). */
export async function connect(): Promise<WindowBridge> {
  const ipc = window.flowsync;
  if (ipc) return { api: typedApi((method, input) => ipc.call(method, input)), subscribe: ipc.subscribe };
  return loopbackBridge(await windowSession());
}
