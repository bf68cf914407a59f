/**
 * Why a file on disk is not sent: the code the agent stores per file, and the words every screen shows for it
 * (`flowsync status`, `flowsync sync`, the window). Here, next to the codes, so that they all say the same.
 */
export const FILE_WARNINGS = {
  binary: 'binary (not UTF-8 text)',
  oversized: 'over 1 MiB',
  'unsafe-path': 'a name the service refuses (a backslash or similar)',
  symlink: 'a symbolic link: not followed',
  special: 'a FIFO, socket or device: not read',
  unreadable: 'could not be read: reading it stopped the reader twice',
} as const;

export type FileWarning = keyof typeof FILE_WARNINGS;

export function describeFileWarning(warning: string): string {
  return (FILE_WARNINGS as Record<string, string>)[warning] ?? warning;
}

/**
 * The path a warning is about, relative to the repository: a file of a flow (`flows/a/key`), or a folder that
 * stands where a flow or a flow root would be and is not synced (`flows/a`: its path is empty).
 */
export function warnedPath(warning: { flowPath: string; path: string }): string {
  return warning.path === '' ? warning.flowPath : `${warning.flowPath}/${warning.path}`;
}
