import type { ModelCheckout } from './checkout.ts';
import { round, scan } from './agent.ts';
import type { Team } from './team.ts';

/*
 * What a person settles, as src/sync/service-side.ts does it: resolve mine / theirs (what is on disk, when it is an
 * edit not sent, kept first as a conflict copy in the service's history), take the newer versions (only files
 * untouched here), delete the held deletions on the service (`sync --yes`) or put them back on disk, take the
 * files not in this checkout. Each replacement of the disk is checked: no edit replaced without a copy.
 */

/** Resolve every conflict keeping mine: the service's version becomes the base, what is on disk is sent on it. */
export function resolveMine(team: Team, c: ModelCheckout): void {
  if (!c.running) return;
  for (const [path, row] of [...c.rows]) {
    if (c.sideOf(team.core, path, row) !== 'conflict') continue;
    // Its user saw both sides and chose: the service's version is not overwritten unseen.
    c.see(path, row.service);
    c.setBase(path, row.service);
    c.rows.delete(path);
  }
  scan(team, c);
}

/** Resolve every conflict taking theirs: a copy of an edit kept first, then the service's version written. */
export function resolveTheirs(team: Team, c: ModelCheckout): void {
  if (!c.running) return;
  for (const [path, row] of [...c.rows]) {
    if (c.sideOf(team.core, path, row) !== 'conflict') continue;
    const mine = c.disk.get(path) ?? null;
    const now = team.service.files.get(path)?.hash ?? null;
    // conflict-copy.ts keepLocalBytes: nothing to lose when the disk is the service's version, or the base while
    // the service's history has it (not a lost one: service-side.ts resolve).
    const base = row.lost === true ? null : row.base;
    if (mine !== null && mine !== base && mine !== now) team.service.keepCopy(path, mine, c.writer);
    replaceOnDisk(team, c, path, now);
    c.setBase(path, now);
    c.rows.delete(path);
  }
  scan(team, c);
}

/** Take the versions newer on the service (behind), each only while its disk is still the base. */
export function takeNewer(team: Team, c: ModelCheckout): void {
  if (!c.running) return;
  for (const [path, row] of [...c.rows]) {
    if (c.sideOf(team.core, path, row) !== 'behind') continue;
    if ((c.disk.get(path) ?? null) !== row.base) continue;
    const now = team.service.files.get(path)?.hash ?? null;
    replaceOnDisk(team, c, path, now);
    c.setBase(path, now);
    c.rows.delete(path);
  }
  scan(team, c);
}

/** `flowsync sync --yes`: the deletions waiting now are confirmed (until the service takes them); a round sends them. */
export function confirmDeletions(team: Team, c: ModelCheckout): void {
  if (!c.running) return;
  // Git's change sets held go too (src's confirmGitChanges: their deletions confirmed with them).
  for (const [path, held] of [...c.gitHeld]) {
    if (!c.heldByGit(path)) continue;
    c.gitHeld.delete(path);
    c.reverts.delete(path);
    if (held.hash === null) c.confirmed.add(path);
  }
  const waiting = c.deletions(team.core);
  for (const path of waiting) c.confirmed.add(path);
  c.heldSet.clear();
  round(team, c);
}

/** "Restore them on disk": the files whose deletion waits are put back from the service's copy. */
export function restoreDeletions(team: Team, c: ModelCheckout): void {
  if (!c.running) return;
  for (const path of c.deletions(team.core)) {
    const now = team.service.files.get(path)?.hash ?? null;
    if (now === null) continue;
    replaceOnDisk(team, c, path, now);
    // service-side.ts restoreDeleted: the version written is the base (the service's, perhaps newer than it was).
    c.setBase(path, now);
  }
  scan(team, c);
}

/** "Write them here": the files on the service this checkout never had, taken. */
export function takeNotInCheckout(team: Team, c: ModelCheckout): void {
  if (!c.running) return;
  for (const path of [...c.notInCheckout]) {
    const now = team.service.files.get(path)?.hash ?? null;
    // service-side.ts restoreNotInCheckout lists the service afresh: a file gone from it meanwhile is seen gone.
    if (now === null) c.seenService.delete(path);
    if (now === null || c.disk.has(path)) continue;
    replaceOnDisk(team, c, path, now);
    c.setBase(path, now);
  }
  c.notInCheckout.clear();
  scan(team, c);
}

/** flowsync writes over a file: what was there must be in the service's history or kept beside it. */
function replaceOnDisk(team: Team, c: ModelCheckout, path: string, hash: string | null) {
  const before = c.disk.get(path) ?? null;
  if (before !== null && before !== hash && !team.service.hasInHistory(path, before) && !c.beside.has(before))
    team.violation(
      'an edit is replaced without a copy',
      `${c.name}'s ${path} ${before} replaced by ${hash ?? 'nothing'}`,
    );
  c.setDisk(path, hash);
  if (hash === null) c.seenService.delete(path);
  else c.seenService.set(path, hash);
}
