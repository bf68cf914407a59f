import type { AgentApi, AgentApiErrorBody, AgentEvent, AgentReply } from '../../src/window/index.ts';

/** A failed AgentApi call, with the issues of an invalid input when there are some. */
export class ApiError extends Error {
  constructor(readonly body: AgentApiErrorBody) {
    super(body.message);
  }
}

/** Whether the window has its agent: it answers, it is gone (the window retries), or it refused this session. */
export type Connection = 'up' | 'down' | 'ended';

export interface WindowBridge {
  api: AgentApi;
  /** Calls the listener with each pushed event; returns the function that stops it. */
  subscribe(listener: (event: AgentEvent) => void): () => void;
  /**
   * Calls the watcher each time the connection changes; returns the function that stops it. Absent over
   * Electron's IPC, where the main process owns the agent.
   */
  watchConnection?(watcher: (state: Connection) => void): () => void;
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

/**
 * What the page keeps for a reload: its tab credential, in this tab's sessionStorage (no other tab reads it), valid
 * while the agent runs. The session itself stays in the page's memory: once the agent is stopped another program
 * may serve a page on this address, which reads whatever this origin stored. The address is this run's alone (the
 * agent's next run has another), so a window left open does not come back after a restart: it says that
 * `flowsync ui --open` opens the new one, as a bookmark and a new tab do.
 */
const TAB_KEY = 'flowsync.tab';

/** Why this page has no session; the window shows it in place of the app. */
export class NoSession extends Error {}

const OPEN_A_NEW_ONE = '`flowsync ui --open` opens a new window.';

/**
 * The session of this page. Opened from a launch address (`#token=…`, single-use, after `#` so no request line or
 * Referer carries it), the page takes the token out of the address bar and this history entry at once, before
 * anything else runs, then trades it for a session credential. Opened without one (a reload), it trades its tab's
 * credential: after the agent restarted, whatever answers now refuses it.
 */
export async function windowSession(): Promise<string> {
  const launch = new URLSearchParams(window.location.hash.slice(1)).get('token');
  if (launch === null) return tabSession();
  history.replaceState(history.state, '', window.location.pathname + window.location.search);
  const reply = await trade({ launch });
  if (reply.ok) return reply.value.session;
  // A launch address used already (from the history, a bookmark) in a tab that holds a session of this agent: that
  // session, rather than a refusal of a window the tab already had.
  if (sessionStorage.getItem(TAB_KEY)) return tabSession(reply.error.message);
  throw new NoSession(reply.error.message);
}

/** The session this tab's credential is traded for; `refused` is why a launch token was not (said if both fail). */
async function tabSession(refused?: string): Promise<string> {
  const tab = sessionStorage.getItem(TAB_KEY);
  if (!tab) {
    throw new NoSession(
      'This address has no token: run `flowsync ui --open` to open the window (or open the address it prints).',
    );
  }
  const reply = await trade({ tab });
  if (reply.ok) return reply.value.session;
  sessionStorage.removeItem(TAB_KEY);
  if (refused !== undefined) throw new NoSession(refused);
  throw new NoSession(
    `This window's session has ended (the agent restarted since this tab opened it, and each run has its own ` +
      `address): ${OPEN_A_NEW_ONE}`,
  );
}

/**
 * `/api/session`: a session and a tab credential for what the page presents. The tab credential is kept for a
 * reload; sent only to this address, where it is worth something only while the agent that gave it runs there.
 */
async function trade(
  presented: { launch: string } | { tab: string } | { session: string },
): Promise<{ ok: true; value: { session: string } } | { ok: false; error: AgentApiErrorBody }> {
  const response = await fetch('/api/session', {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(presented),
  });
  const reply = await readReply(response);
  if (!reply.ok) return reply;
  const { session, tab } = reply.value as { session: string; tab: string };
  sessionStorage.setItem(TAB_KEY, tab);
  return { ok: true, value: { session } };
}

const hex = (bytes: ArrayBuffer) =>
  [...new Uint8Array(bytes)].map((b) => b.toString(16).padStart(2, '0')).join('');
const utf8 = (text: string) => new TextEncoder().encode(text);
const sha256 = async (text: string) => hex(await crypto.subtle.digest('SHA-256', utf8(text)));

/**
 * Whether the program at this address is the agent that gave this session ('ours'), an agent that no longer
 * knows it or no longer serves this address ('ended': a refusal, which a later run's bridge on the same port gives
 * any address of an earlier run), or something else ('other'), asked without sending the session: after the agent
 * was gone, another program may hold its port. The agent proves it knows the session's digest with an HMAC of a
 * fresh challenge and its port (the bridge's `/api/hello`); the page names the session by the digest of that
 * digest. A network error (nothing listening) is thrown.
 */
async function askAgent(session: string): Promise<'ours' | 'ended' | 'other'> {
  const digest = await sha256(session);
  const challenge = hex(crypto.getRandomValues(new Uint8Array(16)).buffer);
  const response = await fetch('/api/hello', {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ id: await sha256(digest), challenge }),
  });
  const reply = await readReply(response);
  if (!reply.ok && reply.error.code === 'refused') return 'ended';
  const proof = reply.ok ? (reply.value as { proof?: unknown }).proof : undefined;
  if (proof === null) return 'ended';
  if (typeof proof !== 'string') return 'other';
  const key = await crypto.subtle.importKey('raw', utf8(digest), { name: 'HMAC', hash: 'SHA-256' }, false, [
    'sign',
  ]);
  const port = window.location.port || '80';
  const expected = hex(await crypto.subtle.sign('HMAC', key, utf8(`${challenge} ${port}`)));
  return proof === expected ? 'ours' : 'other';
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

/** Waits between looks for an agent that is gone: at once, then up to 2 s apart (reconnected within ~2 s). */
const RETRY_MS = [250, 500, 1000, 2000];

function loopbackBridge(session: string): WindowBridge {
  const listeners = new Set<(event: AgentEvent) => void>();
  const watchers = new Set<(state: Connection) => void>();
  let state: Connection = 'up';
  let source: EventSource | null = null;
  let retry: ReturnType<typeof setTimeout> | undefined;
  let attempt = 0;

  const become = (next: Connection) => {
    if (next === state) return;
    state = next;
    for (const watcher of watchers) watcher(next);
  };
  // EventSource cannot send a header: the event stream is the one route that takes the session in the query
  // (a request of the page's own, which no history, Referer or log of ours keeps).
  const open = () => {
    const opened = new EventSource(`/api/events?token=${encodeURIComponent(session)}`);
    // Every event type the agent pushes (status, activity), each a server-sent event of its own name.
    const forward = (message: Event) => {
      const event = JSON.parse((message as MessageEvent<string>).data) as AgentEvent;
      for (const listener of listeners) listener(event);
    };
    for (const type of ['status', 'activity'] as const) opened.addEventListener(type, forward);
    opened.onopen = () => {
      attempt = 0;
      become('up');
    };
    // The stream drops when the agent stops (its socket closes with the process, SIGKILL too). EventSource would
    // reconnect by itself, sending the session to whatever listens there then: it is closed, and the page asks
    // first (askAgent).
    opened.onerror = () => lost();
    source = opened;
  };
  const lost = () => {
    if (retry !== undefined || state === 'ended') return;
    source?.close();
    source = null;
    become('down');
    lookAgain();
  };
  const lookAgain = () => {
    retry = setTimeout(
      async () => {
        const answer = await askAgent(session).catch(() => 'gone' as const);
        // A new tab credential for a reload: the tab's old one ended with the agent's last run.
        if (answer === 'ours') await trade({ session }).catch(() => undefined);
        retry = undefined;
        if (answer === 'ours') open();
        else if (answer === 'ended') become('ended');
        else lookAgain();
      },
      RETRY_MS[Math.min(attempt++, RETRY_MS.length - 1)],
    );
  };

  const api = new Proxy({} as AgentApi, {
    get: (_target, method: string) => async (input: unknown) => {
      const response = await fetch(`/api/${method}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${session}` },
        body: JSON.stringify(input ?? {}),
      }).catch(() => {
        // Nothing answered (a network error, never an HTTP status): the agent is gone.
        lost();
        throw new ApiError({ code: 'unavailable', message: 'The flowsync agent does not answer.' });
      });
      const reply = await readReply(response);
      if (!reply.ok) throw new ApiError(reply.error);
      return reply.value;
    },
  });
  return {
    api,
    subscribe(listener) {
      listeners.add(listener);
      // One stream for the page's life, opened with the first listener: a listener that comes and goes (React's
      // effects) does not drop and reopen it.
      if (source === null && retry === undefined && state === 'up') open();
      return () => listeners.delete(listener);
    },
    watchConnection(watcher) {
      watchers.add(watcher);
      return () => watchers.delete(watcher);
    },
  };
}

/** The AgentApi of this window: Electron's IPC bridge when present, else the loopback bridge (NoSession if none). */
export async function connect(): Promise<WindowBridge> {
  const ipc = window.flowsync;
  if (ipc) return { api: typedApi((method, input) => ipc.call(method, input)), subscribe: ipc.subscribe };
  return loopbackBridge(await windowSession());
}
