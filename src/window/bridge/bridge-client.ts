import { AGENT_API, AgentApiError, readReply, type AgentApiMethod, type AgentEvent } from '../contract.ts';

export interface BridgeClient {
  /** Calls one AgentApi method through the bridge; throws AgentApiError on a refusal. */
  call(method: string, input: unknown): Promise<unknown>;
  /** Follows the bridge's status stream until the returned function is called. */
  subscribe(listener: (event: AgentEvent) => void): () => void;
  /** A new address that opens the agent's window once (the agent token may ask for it; a window may not). */
  launchUrl(): Promise<string>;
}

/**
 * AgentApi over the loopback bridge, from Node: what the Electron main process uses to serve IPC, so that the
 * agent (and its native modules, built for Node) runs in its own Node process and the desktop shell stays glue.
 * Node's built-in fetch, not the undici package: `flowsync status` asks the running agent through this, and that
 * command stays light (the package test holds it to SQLite alone).
 */
export function connectToBridge(address: string): BridgeClient {
  const url = new URL(address);
  const origin = url.origin;
  const token = new URLSearchParams(url.hash.slice(1)).get('token') ?? '';
  const authorization = `Bearer ${token}`;
  const headers = { 'content-type': 'application/json', authorization, origin };
  const post = async (path: string, input: unknown) => {
    const response = await fetch(`${origin}/api/${path}`, {
      method: 'POST',
      headers,
      body: JSON.stringify(input ?? {}),
    });
    const reply = readReply(await response.json().catch(() => null), `HTTP ${response.status}`);
    if (!reply.ok) throw new AgentApiError(reply.error.code, reply.error.message, reply.error.issues);
    return reply.value;
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
      const controller = new AbortController();
      void (async () => {
        // Node can send a header on the event stream too, so the token stays out of the URL here as well.
        const response = await fetch(`${origin}/api/events`, {
          headers: { authorization, origin },
          signal: controller.signal,
        });
        if (!response.body) return;
        let buffer = '';
        const decoder = new TextDecoder();
        // A reader, not `for await`: the ES2023 lib's ReadableStream type has no async iterator.
        const reader = response.body.getReader();
        for (let next = await reader.read(); !next.done; next = await reader.read()) {
          buffer += decoder.decode(next.value, { stream: true });
          let end: number;
          while ((end = buffer.indexOf('\n\n')) >= 0) {
            const message = buffer.slice(0, end);
            buffer = buffer.slice(end + 2);
            const data = message.split('\n').find((line) => line.startsWith('data: '));
            if (data) listener(JSON.parse(data.slice(6)) as AgentEvent);
          }
        }
      })().catch((error: unknown) => {
        // Unsubscribed (an abort), or the agent went away mid-stream (fetch's TypeError): the caller's reconnect
        // says so. A malformed event is a bug, logged; the log is loaded only then: `flowsync status` reaches the
        // agent through this module, and must not load the log (pino) at every run.
        const name = (error as Error).name;
        if (name === 'AbortError' || name === 'TypeError') return;
        void import('../../host/index.ts').then(({ reportIncident }) =>
          reportIncident(error, { during: 'reading the agent’s events' }),
        );
      });
      return () => controller.abort();
    },
  };
}

/**
 * Whether an agent answers at this window address (the agent lock's check for a live-looking owner on systems
 * without process start times): a refusal is still an answer from the agent; nothing listening is not.
 */
export async function bridgeAnswers(address: string): Promise<boolean> {
  try {
    await connectToBridge(address).call('status', {});
    return true;
  } catch (error) {
    return error instanceof AgentApiError;
  }
}
