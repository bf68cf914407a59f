import { z } from 'zod';

/**
 * The one rule for paths that travel on the wire (`flow_path`, a file's `path`), both ways: relative,
 * `/`-separated, no `..`, `.`, `\`, NUL, control character or empty segment. Returns why a path is refused, or
 * null when it is safe. The service refuses such a path in a write, the scanner does not send one, and the client
 * refuses an answer that names one (servicePathSchema): a path from a service is joined to a repository root.
 */
export function unsafePathReason(path: string): string | null {
  if (path.length === 0) return 'is empty';
  if (path.length > 1024) return 'is longer than 1024 characters';
  if (path.includes('\0')) return 'contains a NUL byte';
  // eslint-disable-next-line no-control-regex -- C0 and DEL: a name a terminal obeys, or a line breaker
  if (/[\u0001-\u001f\u007f]/.test(path)) return 'contains a control character';
  if (path.includes('\\')) return 'contains a backslash (use /)';
  if (path.startsWith('/') || /^[A-Za-z]:/.test(path)) return 'is absolute';
  for (const segment of path.split('/')) {
    if (segment === '') return 'has an empty segment';
    if (segment === '..') return 'has a .. segment';
    if (segment === '.') return 'has a . segment';
  }
  return null;
}

/**
 * A path in a value a service returns (a listing, a conflict, a version): a string the rule above allows, or the
 * whole answer is refused by the client as a protocol error that names it. Nothing past this schema is ever
 * given a path like `flows/a/../../../.bashrc`, whichever service answered.
 */
export const servicePathSchema = z.string().superRefine((path, context) => {
  const reason = unsafePathReason(path);
  if (reason !== null)
    context.addIssue({ code: 'custom', message: `${JSON.stringify(path.slice(0, 200))} ${reason}` });
});
