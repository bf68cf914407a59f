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
