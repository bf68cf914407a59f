import { createHash } from 'node:crypto';

export function sha256Hex(data: string | Buffer): string {
  return createHash('sha256').update(data).digest('hex');
}

/**
 * A flow's aggregate hash: SHA-256 over its files' `path NUL hash` lines in code-unit order of path, so the same
 * files give the same hash whatever order they were sent in.
 */
export function flowAggregateHash(files: Iterable<{ path: string; hash: string }>): string {
  const lines = [...files].map((file) => `${file.path}\0${file.hash}\n`);
  lines.sort();
  return sha256Hex(lines.join(''));
}
