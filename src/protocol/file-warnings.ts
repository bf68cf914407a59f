/**
 * Why a file on disk is not sent, and what to do about it: the code the agent stores per file, and the words every
 * screen shows for it (`flowsync status`, `flowsync sync`, the window). Here, next to the codes, so that they all
 * say the same.
 */
export const FILE_WARNINGS = {
  binary: { reason: 'binary (not UTF-8 text)', fix: 'add it to .gitignore' },
  oversized: { reason: 'over 1 MiB', fix: 'add it to .gitignore' },
  'unsafe-path': { reason: 'a name the service refuses', fix: 'rename it' },
  symlink: { reason: 'a symbolic link', fix: 'not followed' },
  special: { reason: 'a FIFO, socket or device', fix: 'not read' },
  // Not sent, and not deleted either: a read error is not a deletion (issue 20). The service keeps the version it
  // has, and the file is read again with the round's back-off until it can be (or is really gone).
  unreadable: { reason: 'could not be read', fix: 'the service keeps its last version; read again soon' },
  // Another name of the same file may be anywhere on the disk (another user's link to your 0600 key).
  hardlink: { reason: 'hard link', fix: 'not sent' },
  'non-utf8-name': { reason: 'a name that is not UTF-8', fix: 'rename it' },
} as const;

export type FileWarning = keyof typeof FILE_WARNINGS;

/** `binary` → "binary (not UTF-8 text): add it to .gitignore"; an unknown code is shown as it is. */
export function describeFileWarning(warning: string): string {
  const known = (FILE_WARNINGS as Record<string, { reason: string; fix: string }>)[warning];
  return known ? `${known.reason}: ${known.fix}` : warning;
}

/**
 * The path a warning is about, relative to the repository: a file of a flow (`flows/a/key`), or a folder that
 * stands where a flow or a flow root would be and is not synced (`flows/a`: its path is empty).
 */
export function warnedPath(warning: { flowPath: string; path: string }): string {
  return warning.path === '' ? warning.flowPath : `${warning.flowPath}/${warning.path}`;
}
