/**
 * What a file in conflict is here, from the disk as it is now: the label said "unchanged here (this
 * checkout is behind: --theirs takes it)" of a file edited after a teammate's version came in, because it compared
 * the hash last sent with the base, not the disk; following it left the edit only in the service's history. `disk`:
 * the hash of what is on disk now (null: nothing); `base`: what this checkout last synced (null: never synced).
 * - 'deleted': not on disk, though synced here.
 * - 'never synced': on disk, never synced from this checkout (a worktree or a clone made the source): another
 *   version, not an edit of its user's.
 * - 'unchanged': the disk is what was last synced (behind, or a restore of that very version).
 * - 'changed': edited here since.
 */
export type HereSide = 'deleted' | 'never synced' | 'unchanged' | 'changed';

export function hereSide(sides: { disk: string | null; base: string | null }): HereSide {
  if (sides.disk === null) return 'deleted';
  if (sides.base === null) return 'never synced';
  return sides.disk === sides.base ? 'unchanged' : 'changed';
}
