/**
 * The one rule for paths that travel on the wire (`flow_path`, a file's `path`): relative, `/`-separated,
 * no `..`, `.`, `\`, NUL, control character or empty segment. Returns why a path is refused, or null when it is
 * safe.
 */
export function unsafePathReason(path: string): string | null {
  if (path.length === 0) return 'is empty';
  if (path.length > 1024) return 'is longer than 1024 characters';
  if (path.includes('\0')) return 'contains a NUL byte';
  // eslint-disable-next-line no-control-regex -- a control character is what this rule looks for
  if (/[\u0000-\u001f\u007f]/.test(path)) return 'contains a control character';
  if (path.includes('\\')) return 'contains a backslash (use /)';
  if (path.startsWith('/') || /^[A-Za-z]:/.test(path)) return 'is absolute';
  for (const segment of path.split('/')) {
    if (segment === '') return 'has an empty segment';
    if (segment === '..') return 'has a .. segment';
    if (segment === '.') return 'has a . segment';
  }
  return null;
}
