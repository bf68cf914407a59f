/**
 * What a flow's aggregate hash is the SHA-256 of (docs/architecture.md): its files' `path NUL hash` lines in
 * code-unit order of path, so the same files give the same hash whatever order they were sent in. The one
 * definition, for the service that computes it and the agent that compares it (`list_flows`); the hashing itself
 * stays with each (this layer runs in the window too, which has no node:crypto).
 */
export function flowHashInput(files: Iterable<{ path: string; hash: string }>): string {
  const lines = [...files].map((file) => `${file.path}\0${file.hash}\n`);
  lines.sort();
  return lines.join('');
}
