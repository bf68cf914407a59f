/**
 * What every screen says while a repository's folder is not there (phase `missing`): the engine's status, the
 * CLI's line and the window's activity. Nothing is deleted on the service meanwhile, and the agent looks for the
 * folder again by itself.
 */
export function folderGone(folder: string): string {
  return `${folder} is gone; syncing resumes when it is back`;
}
