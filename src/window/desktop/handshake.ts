import { z } from 'zod';

/**
 * The structured handshake: how a parent process (the desktop app) learns where the agent's window is served,
 * instead of reading the human `Window:` line. The agent posts it once its bridge listens; `url` carries the agent
 * token after `#` (the human line never does), and `port` and `token` are given apart so no one has to parse it.
 */
export const agentReadySchema = z.object({
  type: z.literal('ready'),
  // The bridge listens on loopback only, under a name of its run's (`<random>.localhost`, bridge.ts): any other
  // address is not the agent's.
  url: z.url({ protocol: /^http$/, hostname: /^[a-z0-9-]+\.localhost$/ }),
  port: z.number().int().min(1).max(65_535),
  token: z.string().min(1),
});
export type AgentReady = z.infer<typeof agentReadySchema>;

/** Electron's `process.parentPort` in a utility process (absent under plain Node). */
interface ParentPort {
  postMessage(message: unknown): void;
}

/** The ready message for a bridge address as the bridge gives it (`http://<name>.localhost:<port>/#token=<token>`). */
export function readyMessage(bridgeUrl: string): AgentReady {
  const url = new URL(bridgeUrl);
  return agentReadySchema.parse({
    type: 'ready',
    url: bridgeUrl,
    port: Number(url.port),
    token: new URLSearchParams(url.hash.slice(1)).get('token') ?? '',
  });
}

/**
 * Tells the parent, if there is one listening, that the window is served at `bridgeUrl`: through Electron's
 * parentPort in a utility process, or through the IPC channel of a Node child (`fork`, or `spawn` with 'ipc').
 * In a terminal there is neither, and the human line is all there is. Resolves once Node reports the message sent
 * (a send is asynchronous where the pipe is, as on Windows), so a process that exits right after, one that found
 * an agent already running, can await it and not lose it.
 */
export function announceReady(bridgeUrl: string): Promise<void> {
  const message = readyMessage(bridgeUrl);
  const { parentPort } = process as { parentPort?: ParentPort };
  if (parentPort) {
    parentPort.postMessage(message);
    return Promise.resolve();
  }
  if (!process.send || !process.connected) return Promise.resolve();
  // With a callback, a parent that closed the channel meanwhile only loses the message; without one, Node would
  // raise the failed send as an 'error' on the process and end the agent.
  return new Promise((resolve) => process.send!(message, undefined, {}, () => resolve()));
}

/** What both an Electron UtilityProcess and a Node ChildProcess offer: messages from the child, and its end. */
export interface AgentChild {
  on(event: 'message', listener: (message: unknown) => void): unknown;
  once(event: 'exit', listener: (code: number | null) => void): unknown;
  /** A Node child that could not be started (no `node` on the PATH) has an error and no exit. */
  once(event: 'error', listener: (error: unknown) => void): unknown;
  off(event: 'message', listener: (message: unknown) => void): unknown;
}

/**
 * Waits for the agent's ready message. No time-out: the first sync of large repositories comes before the bridge
 * (minutes, on a cold cache), and an agent that fails exits, which ends the wait with its exit code.
 */
export function waitForAgentReady(child: AgentChild): Promise<AgentReady> {
  return new Promise((resolve, reject) => {
    const onMessage = (message: unknown) => {
      if ((message as { type?: unknown } | null)?.type !== 'ready') return;
      child.off('message', onMessage);
      const parsed = agentReadySchema.safeParse(message);
      if (parsed.success) resolve(parsed.data);
      else reject(new Error(`The agent's ready message is malformed: ${parsed.error.issues[0]?.message}`));
    };
    child.on('message', onMessage);
    child.once('exit', (code) => {
      child.off('message', onMessage);
      reject(new Error(`The agent (flowsync ui) exited with code ${code} before its window was ready.`));
    });
    child.once('error', (error) => {
      child.off('message', onMessage);
      reject(
        new Error(
          `The agent (flowsync ui) failed before its window was ready: ${(error as Error).message ?? error}`,
        ),
      );
    });
  });
}
