import { PATHS, type ModelCheckout, type Tree } from './checkout.ts';
import { scan } from './agent.ts';
import { currentTree, type Team } from './team.ts';

/*
 * What people and git do to a checkout's disk (issue 46's motions among them): an edit, a deletion, a rename, a
 * commit, a branch switch (many changes at once), a pull (the disk becomes the service's, as the teammates pushed
 * it), `git checkout -- <paths>` (the disk back to the last commit). A running agent's watcher sees each at once.
 */

function changed(team: Team, c: ModelCheckout) {
  if (c.running) scan(team, c);
}

export function edit(team: Team, c: ModelCheckout, path: string): void {
  c.setDisk(path, team.content(c));
  changed(team, c);
}

/** `rm` of one file, or `rm -r` of many. */
export function remove(team: Team, c: ModelCheckout, paths: readonly string[]): void {
  for (const path of paths) c.setDisk(path, null);
  changed(team, c);
}

/** `mv from to`: only onto a free name. */
export function rename(team: Team, c: ModelCheckout, from: string, to: string): void {
  const hash = c.disk.get(from);
  if (hash === undefined || c.disk.has(to)) return;
  c.setDisk(to, hash);
  c.setDisk(from, null);
  changed(team, c);
}

export function commit(c: ModelCheckout): void {
  c.head = new Map(c.disk);
}

/**
 * `git switch`: what is there is committed first (no edit is at stake), then the branch's commit is checked out; a
 * new branch starts from this one with some files changed and some deleted.
 */
export function switchBranch(
  team: Team,
  c: ModelCheckout,
  to: string,
  change: { edits: readonly string[]; deletes: readonly string[] },
): void {
  if (to === c.branch) return;
  commit(c);
  c.branches.set(c.branch, c.head);
  let target = c.branches.get(to);
  if (target === undefined) {
    target = new Map(c.head);
    for (const path of change.edits) target.set(path, team.content(c));
    for (const path of change.deletes) target.delete(path);
  }
  c.branch = to;
  c.head = new Map(target);
  setTree(c, target);
  changed(team, c);
}

/** `git pull`: the disk becomes what the service holds (the teammates pushed the same), and is committed. */
export function pull(team: Team, c: ModelCheckout): void {
  const service = currentTree(team.service);
  c.head = new Map(service);
  setTree(c, service);
  changed(team, c);
}

/** `git checkout -- <paths>`: those files back to the last commit (a partial undo of a deletion among them). */
export function checkoutPaths(team: Team, c: ModelCheckout, paths: readonly string[]): void {
  for (const path of paths) c.setDisk(path, c.head.get(path) ?? null);
  changed(team, c);
}

function setTree(c: ModelCheckout, tree: Tree) {
  for (const path of PATHS) c.setDisk(path, tree.get(path) ?? null);
}
