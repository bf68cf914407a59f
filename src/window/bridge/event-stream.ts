import type { FastifyReply, FastifyRequest } from 'fastify';
import type { AgentEvent } from '../contract.ts';

/** The streams open now: closing the bridge ends them rather than waiting for them (an open window keeps one). */
export type OpenStreams = Set<NodeJS.WritableStream & { end(): void }>;

/** `GET /api/events`: every event of the agent as a server-sent event, until the page goes. */
export function streamEvents(
  subscribe: (listener: (event: AgentEvent) => void) => () => void,
  streams: OpenStreams,
) {
  return (request: FastifyRequest, reply: FastifyReply) => {
    reply.hijack();
    const stream = reply.raw;
    stream.writeHead(200, {
      'content-type': 'text/event-stream; charset=utf-8',
      'cache-control': 'no-store',
      connection: 'keep-alive',
      'x-content-type-options': 'nosniff',
    });
    const send = (event: AgentEvent) =>
      stream.write(`event: ${event.type}\ndata: ${JSON.stringify(event)}\n\n`);
    const unsubscribe = subscribe(send);
    streams.add(stream);
    // A comment now and then keeps proxies and the browser from closing an idle stream.
    const heartbeat = setInterval(() => stream.write(': keep-alive\n\n'), 15_000);
    request.raw.on('close', () => {
      clearInterval(heartbeat);
      unsubscribe();
      streams.delete(stream);
    });
  };
}
