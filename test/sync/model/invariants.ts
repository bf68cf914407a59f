import { differences, type ModelCheckout } from './checkout.ts';
import { look, round, scan } from './agent.ts';
import { currentTree, type Team } from './team.ts';

/*
 * The rules checked after every step (those checked where they happen are in agent.ts and user.ts: a deletion
 * over the guard or held sent unconfirmed, a confirmed deletion held again, a version overwritten unseen, a false
 * "went back in time", an edit replaced without a copy), and the one checked once the team is quiet.
 */

export function afterStep(team: Team): void {
  // No acknowledged version is lost from the service's history (but for what a restore from a backup took).
  for (const key of team.acknowledged) {
    if (team.takenByRestore.has(key)) continue;
    const [path, hash] = splitKey(key);
    if (hash !== null && !team.service.hasInHistory(path, hash))
      team.violation('an acknowledged version is lost', key);
  }
  for (const c of team.checkouts) inSyncOnlyWhenSo(team, c);
}

/** "In sync" is never said while the disk differs from the service as this checkout last saw it. */
function inSyncOnlyWhenSo(team: Team, c: ModelCheckout) {
  if (!team.core.saysInSync(c.statusFacts(team.core))) return;
  const differ = differences(c.disk, c.seenService);
  if (differ.length > 0)
    team.violation(
      `"in sync" said while the disk differs`,
      `${c.name}${c.running ? '' : ' (no agent running)'}: ${differ.map((path) => `${path} ${c.disk.get(path) ?? 'none'} here, ${c.seenService.get(path) ?? 'none'} there`).join('; ')}`,
    );
}

/**
 * Quiescence: every agent runs, and rounds and looks go on until nothing changes. Then every checkout is the
 * service, or names each difference: recorded (behind, conflict, deleted there, lost), a held deletion, or a file
 * not in this checkout.
 */
export function quiesce(team: Team): void {
  team.step++;
  for (const c of team.checkouts)
    if (!c.running) {
      c.running = true;
      scan(team, c);
    }
  let before = fingerprint(team);
  for (let pass = 0; pass < 12; pass++) {
    for (const c of team.checkouts) {
      round(team, c);
      look(team, c);
    }
    afterStep(team);
    const now = fingerprint(team);
    if (now === before) break;
    before = now;
  }
  const service = currentTree(team.service);
  for (const c of team.checkouts) {
    const held = new Set(c.held > 0 ? c.deletions(team.core) : []);
    const unnamed = differences(c.disk, service).filter(
      (path) => !c.rows.has(path) && !held.has(path) && !c.notInCheckout.has(path) && !c.heldByGit(path),
    );
    if (unnamed.length > 0)
      team.violation(
        'after quiescence a difference is not named',
        `${c.name}: ${unnamed.map((path) => `${path} ${c.disk.get(path) ?? 'none'} here, ${service.get(path) ?? 'none'} on the service`).join('; ')}`,
      );
  }
}

function fingerprint(team: Team): string {
  const tree = (map: ReadonlyMap<string, string>) => JSON.stringify([...map].sort());
  return JSON.stringify([
    tree(currentTree(team.service)),
    team.checkouts.map((c) => [tree(c.disk), tree(c.bases), JSON.stringify([...c.rows].sort()), c.held]),
  ]);
}

function splitKey(key: string): [string, string | null] {
  const at = key.indexOf('@');
  const hash = key.slice(at + 1);
  return [key.slice(0, at), hash === 'deleted' ? null : hash];
}
