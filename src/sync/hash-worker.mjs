// The hasher's worker: reads files, rejects what is not UTF-8 text, and hashes the bytes. Plain JavaScript so that
// it runs in a worker thread without the TypeScript loader the main thread uses.
import { createHash } from 'node:crypto';
import { readFileSync, statSync } from 'node:fs';
import { parentPort } from 'node:worker_threads';

const utf8 = new TextDecoder('utf-8', { fatal: true });

parentPort.on('message', ({ id, files, maxBytes, withContent }) => {
  const results = files.map((absolutePath) => {
    try {
      // Not read at all when too large: a 2 GB video in a flow folder must not stall the agent.
      const { size } = statSync(absolutePath);
      if (size > maxBytes) return { size, hash: '', warning: 'oversized' };
      const bytes = readFileSync(absolutePath);
      const hash = createHash('sha256').update(bytes).digest('hex');
      if (bytes.length > maxBytes) return { size: bytes.length, hash: '', warning: 'oversized' };
      if (bytes.includes(0)) return { size: bytes.length, hash, warning: 'binary' };
      let content;
      try {
        content = utf8.decode(bytes);
      } catch {
        return { size: bytes.length, hash, warning: 'binary' };
      }
      return withContent ? { size: bytes.length, hash, content } : { size: bytes.length, hash };
    } catch (error) {
      return { missing: true, code: error && error.code ? String(error.code) : 'EIO' };
    }
  });
  parentPort.postMessage({ id, results });
});
