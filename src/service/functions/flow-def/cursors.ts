import { CallRefused } from '../../errors.ts';

/** list_files' cursor: the last (flow, path) of the page, opaque to the caller. */
export function cursorFor(flowPath: string, path: string): string {
  return Buffer.from(JSON.stringify([flowPath, path])).toString('base64url');
}

export function cursorOf(cursor: string): [string, string] {
  try {
    const parsed: unknown = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
    if (Array.isArray(parsed) && parsed.length === 2 && parsed.every((part) => typeof part === 'string'))
      return parsed as [string, string];
  } catch {
    // refused below
  }
  throw new CallRefused('`after` is not a cursor this service gave: start from the first page.', {
    path: ['after'],
  });
}

/** file_versions' cursor: the last version number of the page (the next page is older). */
export function versionCursorOf(after: string): number {
  const version = Number(after);
  if (!/^[1-9][0-9]{0,15}$/.test(after) || !Number.isSafeInteger(version))
    throw new CallRefused('`after` is not a cursor this service gave: start from the first page.', {
      path: ['after'],
    });
  return version;
}
