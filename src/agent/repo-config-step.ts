/**
 * What the agent does with the repository's config on disk (its hash), given the one it last synced (`base`, null:
 * none) and the service's config a stale write was refused for (`conflict`, its hash; null: none). Like a flow's
 * file: a config equal to its base is in sync; one that differs is sent on that base; while a conflict stands
 * nothing is sent (its user chooses in Repo config), unless the disk now holds the service's config (settled).
 */
export type RepoConfigStep = 'in-sync' | 'send' | 'settled' | 'wait';

export function repoConfigStep(disk: string, base: string | null, conflict: string | null): RepoConfigStep {
  if (conflict !== null) return disk === conflict ? 'settled' : 'wait';
  return disk === base ? 'in-sync' : 'send';
}

/**
 * What a Save from the Repo config screen does with the file, by hashes of its bytes: as the screen loaded it
 * (`loaded`, its base; null: no file then), as it is on disk now (`disk`; null: none) and as the save would write it
 * (`mine`). A file changed since the screen loaded it (a hand edit, a `git checkout`) is never written over: a
 * conflict its user settles in the screen, nothing written and nothing sent. Unless the disk already holds what the
 * save writes: nothing of anyone's would be lost. `takeMine`: its user chose the screen's over the file the conflict
 * showed (`loaded` is then that file's hash): the file's content is kept beside it first. The service's side is
 * the base the save is sent on (repoConfigStep): a teammate's newer config there is its own conflict.
 */
export type RepoConfigSave = 'save' | 'save-keeping-the-file' | 'file-changed';

export function repoConfigSave(
  loaded: string | null,
  disk: string | null,
  mine: string,
  takeMine: boolean,
): RepoConfigSave {
  if (disk === mine) return 'save';
  if (disk !== loaded) return 'file-changed';
  return takeMine && disk !== null ? 'save-keeping-the-file' : 'save';
}
