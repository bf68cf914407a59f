/**
 * Files over this size are not sent (docs/architecture.md, "Limits"): the service stores flow definitions, not assets. The hasher reads
 * no more than this of a flow's file, and the agent no more of its repository config file.
 */
export const MAX_FILE_BYTES = 1024 * 1024;

/** The limit as every screen says it: "1 MiB". */
const MAX_FILE_SIZE = `${MAX_FILE_BYTES / 1024 / 1024} MiB`;

/**
 * Why a file on disk is not sent, and what to do about it: the code the agent stores per file, and the words every
 * screen shows for it (`flowsync status`, `flowsync sync`, the window). Here, next to the codes, so that they all
 * say the same.
 */
export const FILE_WARNINGS = {
  binary: { reason: 'binary (not UTF-8 text)', fix: 'add it to .gitignore' },
  oversized: { reason: `over ${MAX_FILE_SIZE}`, fix: 'add it to .gitignore' },
  'unsafe-path': { reason: 'a name the service refuses', fix: 'rename it' },
  symlink: { reason: 'a symbolic link', fix: 'not followed' },
  special: { reason: 'a FIFO, socket or device', fix: 'not read' },
  // Not sent, and not deleted either: a read error is not a deletion. The service keeps the version it
  // has, and the file is read again with the round's back-off until it can be (or is really gone).
  unreadable: { reason: 'could not be read', fix: 'the service keeps its last version; read again soon' },
  // Another name of the same file may be anywhere on the disk (another user's link to your 0600 key).
  hardlink: { reason: 'hard link', fix: 'not sent' },
  'non-utf8-name': { reason: 'a name that is not UTF-8', fix: 'rename it' },
  // Synced before, then a .gitignore line (one a teammate's pull brought, say) made it ignored: ignoring is not
  // deleting, so the service keeps its last version; only a file gone from disk is a deletion.
  ignored: {
    reason: 'ignored now (.gitignore)',
    fix: 'the service keeps its last version (delete the file here to delete it there)',
  },
} as const;

export type FileWarning = keyof typeof FILE_WARNINGS;

/**
 * The reasons in one breath, for a line that counts the files not sent instead of naming each (the activity of
 * the window, the summary of `flowsync start`).
 */
export const NOT_SENT_REASONS = `binary, over ${MAX_FILE_SIZE}, links, FIFOs, hard links or unreadable now`;

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
