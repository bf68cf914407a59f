/**
 * Why files newer on the service are no longer: the terminal of `start` said when a teammate's edits
 * became newer there, and never when that cleared, nor why.
 * - `taken`: this checkout took them (`flowsync resolve --newer`, the window's Take them).
 * - `here`: this checkout has the service's version now, not by a take (a git pull, or the same edit made here).
 * - `reverted`: the service went back to the version this checkout has (the teammate reverted theirs).
 * - `conflict`: changed here too meanwhile: a conflict now (said as one when it happened).
 */
export type NewerCleared = 'taken' | 'here' | 'reverted' | 'conflict';

/** A file that was newer on the service, with what the state says of it now. */
export interface NoLongerNewer {
  /** The version this checkout had synced, and the service's newer one, when it was newer (null: none). */
  base: string | null;
  service: string | null;
  /** The version this checkout acknowledges now (null: none). */
  acked: string | null;
  /** In conflict now. */
  conflict: boolean;
  /** Written to disk by the last take, on that very service version. */
  taken: boolean;
}

/** The one reason of every file, or null when they went different ways or the reason is not known. */
export function newerCleared(files: readonly NoLongerNewer[]): NewerCleared | null {
  const reasons = new Set(files.map(reasonOf));
  const [only] = reasons;
  return reasons.size === 1 ? (only ?? null) : null;
}

function reasonOf(file: NoLongerNewer): NewerCleared | null {
  if (file.taken) return 'taken';
  if (file.conflict) return 'conflict';
  if (file.acked === file.service) return 'here';
  if (file.acked === file.base) return 'reverted';
  return null;
}

const WHY: Record<NewerCleared, string> = {
  taken: 'taken',
  here: "this checkout has the service's version now (pulled, or the same edit made here)",
  reverted: "reverted there (the service has this checkout's version again)",
  conflict: 'changed here too: in conflict now (`flowsync conflicts`)',
};

/** "No file is newer on the service any more: taken." */
export function newerClearedLine(why: NewerCleared | null): string {
  return `No file is newer on the service any more${why === null ? '' : `: ${WHY[why]}`}.`;
}
