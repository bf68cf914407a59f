import { createHash } from 'node:crypto';

/**
 * The flow aggregate hash as docs/architecture.md defines it, written again here on purpose: a test that reused the
 * service's own function could not catch a change to the definition.
 */
export function flowAggregateHashForTest(files: { path: string; hash: string }[]): string {
  const lines = files.map((f) => `${f.path}\u0000${f.hash}\n`).sort();
  return createHash('sha256').update(lines.join('')).digest('hex');
}
