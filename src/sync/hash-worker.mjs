// The hasher's worker: reads files under the containment rule, rejects what is not UTF-8 text, and hashes the
// bytes. Plain JavaScript so that it runs in a worker thread without the TypeScript loader the main thread uses.
import { createHash } from 'node:crypto';
import { parentPort } from 'node:worker_threads';
import { isGone, readContained, realRoot } from './contained-fs.mjs';

// Bytes are the truth: the content sent is exactly the bytes hashed. fatal: invalid UTF-8 is binary, not
// replaced. ignoreBOM: a byte-order mark (Windows editors write one) stays in the text; stripped, the content no
// longer matched its hash and the service refused the whole flow (422 hash mismatch).
const utf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

/** A file that could not be read now (not gone): kept as the service has it, and read again later. */
const unreadable = (code) => ({ size: 0, hash: '', warning: 'unreadable', code });

/**
 * A file that is UTF-8 but for a character cut off at its end, written this recently, is being written (an editor
 * or a tool paused between two writes): not binary. It is "not read now" (the service keeps its last version, the
 * round's back-off of 1 s, doubling, reads it again) until its last write is this old; then it is binary. Taken
 * for binary at once, the file was deleted on the service for the ~0.3 s of such a pause, with the advice "add it
 * to .gitignore".
 */
const WRITING_MS = 5000;

/** Whether the only flaw of these bytes as UTF-8 is a character cut off at the end. */
function endsMidCharacter(bytes) {
  const streaming = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });
  try {
    streaming.decode(bytes, { stream: true });
  } catch {
    return false;
  }
  return true; // the whole was not UTF-8 (checked first), so only the end is missing
}

parentPort.on('message', ({ id, root, files, maxBytes, withContent }) => {
  // The root's real path once per job: the prefix each file's proof is compared with (no folder check is kept
  // from one file to the next: a folder found real for one file may be a link by the next open).
  let rootReal;
  try {
    rootReal = realRoot(root);
  } catch (error) {
    const code = error && error.code ? String(error.code) : 'EIO';
    const results = files.map(() => (isGone(code) ? { missing: true, code } : unreadable(code)));
    return parentPort.postMessage({ id, results });
  }
  const results = files.map((path) => {
    try {
      const read = readContained(root, path, maxBytes, rootReal);
      if (read.missing) return { missing: true, code: read.code };
      if (read.unreadable) return unreadable(read.code);
      if (read.warning) return { size: read.size, hash: '', warning: read.warning };
      const { bytes, size } = read;
      if (bytes === null) return { size, hash: '', warning: 'oversized' };
      const hash = createHash('sha256').update(bytes).digest('hex');
      if (bytes.includes(0)) return { size, hash, warning: 'binary' };
      let content;
      try {
        content = utf8.decode(bytes);
      } catch {
        if (endsMidCharacter(bytes) && Date.now() - read.mtimeMs < WRITING_MS) return unreadable('EAGAIN');
        return { size, hash, warning: 'binary' };
      }
      return withContent ? { size, hash, content } : { size, hash };
    } catch (error) {
      // Not a read error the rule knows (a bug, memory): not "gone" either, which would delete the file.
      return unreadable(error && error.code ? String(error.code) : 'EIO');
    }
  });
  parentPort.postMessage({ id, results });
});
