import { holdsGitMotions, isOtherWriter } from '../../../src/sync/git-motion.ts';
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
  const before = new Map(c.disk);
  const from = c.branch;
  c.branch = to;
  c.head = new Map(target);
  setTree(c, target);
  gitMoved(team, c, before, `checkout: moving from ${from} to ${to}`);
}

/** `git pull`: the disk becomes what the service holds (the teammates pushed the same), and is committed. */
export function pull(team: Team, c: ModelCheckout): void {
  const service = currentTree(team.service);
  const before = new Map(c.disk);
  c.head = new Map(service);
  setTree(c, service);
  gitMoved(team, c, before, 'pull: Fast-forward');
}

/** `git checkout -- <paths>`: those files back to the last commit (a partial undo of a deletion among them). */
export function checkoutPaths(team: Team, c: ModelCheckout, paths: readonly string[]): void {
  const before = new Map(c.disk);
  for (const path of paths) c.setDisk(path, c.head.get(path) ?? null);
  gitMoved(team, c, before, null);
}

/**
 * What a running agent does with git's motion (src/sync/git-motions.ts): the changes it recorded whose files equal
 * HEAD's tree, seen as git wrote its index (and its reflog, `reflog` null: none, as `checkout --` writes none), are
 * asked of git-motion.ts's rule and, on a service others write to, held as one change set. The model's truth: a
 * file git put back to the committed version over a teammate's version is a revert that must not go unconfirmed.
 * With no agent running, the next start finds the disk changed, as src does (a scan does not ask git).
 */
function gitMoved(team: Team, c: ModelCheckout, before: Tree, reflog: string | null) {
  if (!c.running) return;
  for (const [path, was] of before) {
    const now = c.disk.get(path) ?? null;
    const teammates = team.service.history
      .get(path)
      ?.some((version) => version.hash === was && version.writer !== c.writer && version.writer !== 'seed');
    if (now !== was && now === (c.head.get(path) ?? null) && teammates === true) c.reverts.set(path, now);
  }
  scan(team, c);
  const shared = [...team.service.files.values()].some((file) => isOtherWriter(file.writer, c.writer));
  if (!holdsGitMotions({ setting: 'ask', shared })) return;
  const candidates = [...new Set([...c.disk.keys(), ...c.bases.keys()])].filter(
    (path) => (c.scanned.get(path) ?? null) !== (c.bases.get(path) ?? null) && !c.rows.has(path),
  );
  const at = team.step * 10_000;
  const motion = team.core.gitMotionOf({
    trail: {
      head: reflog === null ? null : { message: reflog, at },
      stash: null,
      indexAt: at,
      busy: false,
      branch: c.branch,
    },
    seenAt: at,
    now: at + 500,
    files: candidates.map((path) => ({
      path,
      equalsHead: (c.disk.get(path) ?? null) === (c.head.get(path) ?? null),
    })),
  });
  if (motion.kind !== 'git') return;
  for (const path of motion.files) c.gitHeld.set(path, { hash: c.disk.get(path) ?? null, name: motion.name });
}

function setTree(c: ModelCheckout, tree: Tree) {
  for (const path of PATHS) c.setDisk(path, tree.get(path) ?? null);
}
