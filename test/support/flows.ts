import { createHash } from 'node:crypto';

export function sha256(content: string): string {
  return createHash('sha256').update(content, 'utf8').digest('hex');
}

/** A file entry as the agent sends it: content with its correct hash. */
export function fileEntry(path: string, content: string): { path: string; content: string; hash: string } {
  return { path, content, hash: sha256(content) };
}
