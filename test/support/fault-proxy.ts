import { createServer, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import { request } from 'undici';
import { API_PREFIX, EXTENSION_FUNCTIONS } from '../../src/protocol/index.ts';

export interface Fault {
  status: number;
  headers?: Record<string, string>;
  body: string;
}

export interface FaultProxy {
  url: string;
  /** The path of every request that reached the proxy, in order. */
  requests: string[];
  /** Decides per request (its body as sent): a fault to answer with, or null to pass it on to the service. */
  fault: (path: string, index: number, body: string) => Fault | null;
  /** Decides per request passed on: true drops the service's answer and sends a gateway time-out instead. */
  loseAnswer: (path: string, index: number) => boolean;
  /**
   * The service's answer as the proxy passes it on (a hostile service: what it says, changed), given the request's
   * path and body; the identity unless set.
   */
  rewrite: (path: string, answer: string, body: string) => string;
  /** Waited for before a request is passed on (a service that takes its time): nothing to wait for unless set. */
  hold: (path: string, index: number) => Promise<void> | undefined;
  close(): Promise<void>;
}

/**
 * A reverse proxy in front of a real service that can answer in its place: a stand-in for the load balancers and
 * gateways (which we do not own) that send 503s, 429s and HTML error pages.
 */
export async function startFaultProxy(target: string): Promise<FaultProxy> {
  const proxy: FaultProxy = {
    url: '',
    requests: [],
    fault: () => null,
    loseAnswer: () => false,
    rewrite: (_path, answer) => answer,
    hold: () => undefined,
    close: () => new Promise((done) => server.close(() => done())),
  };
  const server = createServer((req, res) => {
    void (async () => {
      const body = await readBody(req);
      const path = req.url ?? '/';
      const index = proxy.requests.push(path) - 1;
      const fault = proxy.fault(path, index, body);
      if (fault) {
        res.writeHead(fault.status, { 'content-type': 'application/json', ...fault.headers });
        res.end(fault.body);
        return;
      }
      await proxy.hold(path, index);
      const upstream = await request(`${target}${path}`, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          authorization: req.headers.authorization ?? '',
          // A proxy passes the writer's name on (flowsync's own header; without it the history names no one).
          ...(req.headers['x-flowsync-writer'] !== undefined && {
            'x-flowsync-writer': String(req.headers['x-flowsync-writer']),
          }),
        },
        body,
      });
      const answer = await upstream.body.text();
      if (proxy.loseAnswer(path, index)) {
        // What a gateway does when the service answers too late: the call went through, the answer is lost.
        res.writeHead(504, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ status: 'error', errorMessage: 'gateway time-out', errorData: {} }));
        return;
      }
      res.writeHead(upstream.statusCode, { 'content-type': 'application/json' });
      res.end(proxy.rewrite(path, answer, body));
    })();
  });
  await new Promise<void>((ready) => server.listen(0, '127.0.0.1', ready));
  proxy.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return proxy;
}

/**
 * A service of the spec alone, as a client sees it: a real service behind a proxy that answers 404 (the spec's
 * unknown function) for each of flowsync's extensions, so no base, history or listing is there.
 */
export async function startSpecOnlyFront(target: string): Promise<FaultProxy> {
  const proxy = await startFaultProxy(target);
  const extensions = new Set(EXTENSION_FUNCTIONS.map((fn) => `${API_PREFIX}${fn.path}`));
  proxy.fault = (path) =>
    extensions.has(path)
      ? {
          status: 404,
          body: JSON.stringify({
            status: 'error',
            errorMessage: `Unknown function ${path}.`,
            errorData: { reason: 'unknown_function' },
          }),
        }
      : null;
  return proxy;
}

async function readBody(req: IncomingMessage): Promise<string> {
  let body = '';
  for await (const chunk of req) body += String(chunk);
  return body;
}
