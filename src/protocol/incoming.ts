/**
 * What taking a teammate's newer version does to a file here: `deleted` (deleted on the service, so
 * removed here), `replaced` (another version written over the file), `written` (not here: written, nothing lost).
 * Decided from what is on disk (`disk`, null: nothing) and what the service holds (`service`, null: nothing); null
 * when both are nothing (in sync, nothing to take).
 */
export type IncomingChange = 'deleted' | 'replaced' | 'written';

export function incomingChange(sides: {
  disk: string | null;
  service: string | null;
}): IncomingChange | null {
  if (sides.service === null) return sides.disk === null ? null : 'deleted';
  return sides.disk === null ? 'written' : 'replaced';
}

/** Whether taking it removes or overwrites something here: what the allowance of deletions counts. */
export function takesSomethingAway(change: IncomingChange | null): boolean {
  return change === 'deleted' || change === 'replaced';
}

/** "12 deleted here, 1 replaced, 2 written": the parts that are not none, in that order. */
export function incomingCounts(changes: readonly { change: IncomingChange }[]): string {
  const count = (change: IncomingChange) => changes.filter((file) => file.change === change).length;
  const parts = [
    [count('deleted'), 'deleted here'],
    [count('replaced'), 'replaced'],
    [count('written'), 'written'],
  ] as const;
  return parts
    .filter(([n]) => n > 0)
    .map(([n, words]) => `${n} ${words}`)
    .join(', ');
}

/** What a take did to one file here, as `resolve --newer`, Recent activity and the terminal say it. */
export const TAKEN_WORDS: Record<IncomingChange, string> = {
  deleted: 'deleted here, as on the service',
  replaced: "the service's newer version is on disk",
  written: "the service's version is on disk (it was not here)",
};
