import type { FastifyReply, FastifyRequest } from 'fastify';
import { readFileSync, statSync } from 'node:fs';
import { extname, join, normalize } from 'node:path';
import { replyError } from '../contract.ts';

const CONTENT_TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.ico': 'image/x-icon',
  '.json': 'application/json',
};

/** No remote content, no framing, no inline script: the page can only talk to this bridge. */
const CSP =
  "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; " +
  "connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'none'";

/** `GET /*`: the built renderer's files (renderer/dist); without them, a page that says how to build it. */
export function staticFiles(staticDir: string | undefined) {
  return async (request: FastifyRequest, reply: FastifyReply) => {
    const asset = normalize((request.params as { '*': string })['*'] || 'index.html').replace(
      /^(\.\.[/\\])+/,
      '',
    );
    const file = staticDir ? join(staticDir, asset) : null;
    // A folder (`/assets/`) is not a file: reading it threw EISDIR, a 500 with a stack in agent.log each time.
    if (file && file.startsWith(staticDir!) && statSync(file, { throwIfNoEntry: false })?.isFile()) {
      reply.header('content-type', CONTENT_TYPES[extname(file)] ?? 'application/octet-stream');
      if (extname(file) === '.html') reply.header('content-security-policy', CSP);
      return reply.send(readFileSync(file));
    }
    if (asset !== 'index.html')
      return reply.code(404).send(replyError({ code: 'not_found', message: 'Not found.' }));
    reply.header('content-type', CONTENT_TYPES['.html']).header('content-security-policy', CSP);
    return reply.send(
      '<!doctype html><meta charset="utf-8"><title>flowsync</title>' +
        '<p>The flowsync window is not built in this checkout: run <code>npm run build:renderer</code>, then reload.</p>',
    );
  };
}
