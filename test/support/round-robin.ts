import { createServer, request, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * The smallest load balancer that does what a team's would: each request to the next backend in turn, and, when
 * that backend refuses the connection (its process is gone), the next one. A request already sent to a backend
 * that dies is not sent again (its answer is lost, as behind any balancer): the client's retry is what sends it.
 */
export interface RoundRobin {
  url: string;
  /** Requests each backend answered. */
  answered: number[];
  close(): Promise<void>;
}

export async function startRoundRobin(backends: () => string[]): Promise<RoundRobin> {
  let next = 0;
  const answered: number[] = [];
  const server = createServer((incoming, outgoing) => {
    const chunks: Buffer[] = [];
    incoming.on('data', (chunk: Buffer) => chunks.push(chunk));
    incoming.on('end', () => forward(incoming, Buffer.concat(chunks), outgoing, backends().length));
  });
  function forward(incoming: IncomingMessage, body: Buffer, outgoing: ServerResponse, triesLeft: number) {
    const list = backends();
    const index = next++ % list.length;
    const target = new URL(list[index]!);
    const upstream = request(
      {
        host: target.hostname,
        port: target.port,
        method: incoming.method,
        path: incoming.url,
        headers: { ...incoming.headers, host: target.host, connection: 'close' },
      },
      (answer) => {
        answered[index] = (answered[index] ?? 0) + 1;
        outgoing.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(outgoing);
      },
    );
    upstream.on('error', (error: NodeJS.ErrnoException) => {
      if (error.code === 'ECONNREFUSED' && triesLeft > 1 && !outgoing.headersSent) {
        forward(incoming, body, outgoing, triesLeft - 1);
      } else {
        outgoing.destroy();
      }
    });
    upstream.end(body);
  }
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    answered,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
