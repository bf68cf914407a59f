// The hasher's worker: reads files under the containment rule, rejects what is not UTF-8 text, and hashes the
// bytes. Plain JavaScript so that it runs in a worker thread without the TypeScript loader the main thread uses.
import { createHash } from 'node:crypto';
import { parentPort } from 'node:worker_threads';
import { readContained } from './contained-fs.mjs';

// Bytes are the truth: the content sent is exactly the bytes hashed. fatal: invalid UTF-8 is binary, not
// replaced. ignoreBOM: a byte-order mark (Windows editors write one) stays in the text; stripped, the content no
// longer matched its hash and the service refused the whole flow (422 hash mismatch).
const utf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

parentPort.on('message', ({ id, root, files, maxBytes, withContent }) => {
  // Folders found real on the way to this job's files: a job is 32 files of mostly the same folders.
  const known = new Set();
  const results = files.map((path) => {
    try {
      const read = readContained(root, path, maxBytes, known);
      if (read.missing) return { missing: true, code: read.code };
      if (read.warning) return { size: read.size, hash: '', warning: read.warning };
      const { bytes, size } = read;
      if (bytes === null) return { size, hash: '', warning: 'oversized' };
      const hash = createHash('sha256').update(bytes).digest('hex');
      if (bytes.includes(0)) return { size, hash, warning: 'binary' };
      let content;
      try {
        content = utf8.decode(bytes);
      } catch {
        return { size, hash, warning: 'binary' };
      }
      return withContent ? { size, hash, content } : { size, hash };
    } catch (error) {
      return { missing: true, code: error && error.code ? String(error.code) : 'EIO' };
    }
  });
  parentPort.postMessage({ id, results });
});
