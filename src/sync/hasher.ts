import { hash as sha256 } from 'node:crypto';
import { setImmediate as yieldToEventLoop } from 'node:timers/promises';
import { MAX_FILE_BYTES, type FileWarning } from '../protocol/index.ts';
import { isGone, readContained, realRoot } from './contained-fs.mjs';

export type HashResult =
  | { missing: false; size: number; hash: string; warning: FileWarning | null; content: string | null }
  | { missing: true; code: string };

export interface HasherOptions {
  /**
   * Sees each file just before it is read; what it throws is a read that failed (the fault tests make a file
   * unreadable with it: a read error, never a deletion).
   */
  beforeRead?: (path: string) => void;
}

/**
 * How long one slice of reads may hold the event loop before it yields (the watcher, the bridge and the network
 * answer in between). A file is at most MAX_FILE_BYTES (1 MiB: about 3 ms to read and hash here), so a slice
 * ends within a few ms of this.
 */
const SLICE_MS = 8;

// Bytes are the truth: the content sent is exactly the bytes hashed. fatal: invalid UTF-8 is binary, not
// replaced. ignoreBOM: a byte-order mark (Windows editors write one) stays in the text; stripped, the content no
// longer matched its hash and the service refused the whole flow (422 hash mismatch).
const utf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

/**
 * A file that is UTF-8 but for a character cut off at its end, written this recently, is being written (an editor
 * or a tool paused between two writes): not binary. It is "not read now" (the service keeps its last version, the
 * round's back-off of 1 s, doubling, reads it again) until its last write is this old; then it is binary. Taken
 * for binary at once, the file was deleted on the service for the ~0.3 s of such a pause, with the advice "add it
 * to .gitignore".
 */
const WRITING_MS = 5000;

/** A file that could not be read now (not gone): kept as the service has it, and read again later. */
const unreadable = (): HashResult => ({
  missing: false,
  size: 0,
  hash: '',
  warning: 'unreadable',
  content: null,
});

/**
 * SHA-256 of files, read under the containment rule, on the main thread in slices of SLICE_MS.
 *
 * It was a pool of worker threads (one per core) until Node 24: there a worker's memory stays in the process after
 * `terminate()` (two workers that built 3 million small objects each: 581 MB 3 s after their terminate on Node
 * 24.21, and 463 MB with the young generation bounded; docs/memory.md), so the pool that retired its used workers
 * to give their heaps back no longer gave anything back (the agent at rest after a first pass of 100,000 files:
 * 345-447 MB). Hashing is cheap (SHA-256 of 100 MB in 86 ms with the CPU's SHA extensions); reading is the cost,
 * and the page cache answers it in microseconds per file. Measured on the 10,000-file / 100 MB first sync and the
 * 100,000-file first pass in docs/memory.md.
 */
export class Hasher {
  private closed = false;

  constructor(private readonly options: HasherOptions = {}) {}

  /**
   * Hashes files given by path relative to `root` (`/`-separated), read under the containment rule
   * (contained-fs.mjs); with `withContent`, also returns the UTF-8 text of those that are text.
   */
  async hash(root: string, paths: readonly string[], withContent = false): Promise<HashResult[]> {
    const results: HashResult[] = [];
    let index = 0;
    while (index < paths.length) {
      if (this.closed) throw new Error('the hasher is closed');
      // The root's real path once per slice: the prefix each file's proof is compared with (no folder check is
      // kept from one file to the next: a folder found real for one file may be a link by the next open).
      let rootReal: string | null = null;
      let rootCode = 'EIO';
      try {
        rootReal = realRoot(root);
      } catch (error) {
        rootCode = (error as NodeJS.ErrnoException).code ?? 'EIO';
      }
      const sliceEnd = performance.now() + SLICE_MS;
      do {
        const path = paths[index++]!;
        if (rootReal === null)
          results.push(isGone(rootCode) ? { missing: true, code: rootCode } : unreadable());
        else results.push(this.read(root, rootReal, path, withContent));
      } while (index < paths.length && performance.now() < sliceEnd);
      if (index < paths.length) await yieldToEventLoop();
    }
    return results;
  }

  /** Stops: a hash in progress throws at its next slice. */
  async close(): Promise<void> {
    this.closed = true;
  }

  private read(root: string, rootReal: string, path: string, withContent: boolean): HashResult {
    try {
      this.options.beforeRead?.(path);
      const read = readContained(root, path, MAX_FILE_BYTES, rootReal);
      if (read.missing) return { missing: true, code: read.code };
      if (read.unreadable) return unreadable();
      if (read.warning)
        return { missing: false, size: read.size, hash: '', warning: read.warning, content: null };
      const { bytes, size } = read;
      if (bytes === null) return { missing: false, size, hash: '', warning: 'oversized', content: null };
      const hash = sha256('sha256', bytes);
      const binary: HashResult = { missing: false, size, hash, warning: 'binary', content: null };
      if (bytes.includes(0)) return binary;
      let content: string;
      try {
        content = utf8.decode(bytes);
      } catch {
        if (endsMidCharacter(bytes) && Date.now() - read.mtimeMs < WRITING_MS) return unreadable();
        return binary;
      }
      return { missing: false, size, hash, warning: null, content: withContent ? content : null };
    } catch {
      // Not a read error the rule knows (a bug, memory): not "gone" either, which would delete the file.
      return unreadable();
    }
  }
}

/** Whether the only flaw of these bytes as UTF-8 is a character cut off at the end. */
function endsMidCharacter(bytes: Uint8Array): boolean {
  const streaming = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });
  try {
    streaming.decode(bytes, { stream: true });
  } catch {
    return false;
  }
  return true; // the whole was not UTF-8 (checked first), so only the end is missing
}
