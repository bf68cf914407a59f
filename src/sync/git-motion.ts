/*
 * Git's motion or a person's edit, decided once, pure: given what git left in its folder (the newest
 * entries of HEAD's and the stash's reflogs, when it last wrote its index, whether it is at work now), when the
 * changes were seen, and whether each changed file now equals the version in HEAD's tree. Nothing here reads the
 * disk, git or the clock; the agent reads them (src/agent/git-trail.ts) in one git call per batch. Its rows:
 * test/sync/git-motion.test.ts. The model of the team (test/sync/model/git.ts) drives it.
 *
 * Why this way: git writes the files of a branch switch, `checkout -- <paths>`, `reset`, `stash`, a rebase or a
 * merge, then its index, then HEAD and the reflog; a person's editor writes a file and nothing of git's. A change
 * whose file is what HEAD's tree holds, seen within seconds of git writing its index or reflog, is git's; a change
 * that is anything else (an edit, an edit staged, a new file) is the person's, whatever git did around it.
 */

/** What git left in its folder, read at once. Times in ms since the epoch (the reflog's are whole seconds). */
export interface GitTrail {
  /** The newest entry of HEAD's reflog (.git/logs/HEAD): its message and when it was written; null: none. */
  head: { message: string; at: number } | null;
  /** The newest entry of the stash's reflog (.git/logs/refs/stash); null: none. */
  stash: { message: string; at: number } | null;
  /** When git last wrote its index (.git/index's mtime); null: no index. */
  indexAt: number | null;
  /** git is at work now (.git/index.lock is there): not all of its changes are on disk yet. */
  busy: boolean;
  /** The branch HEAD names now (`main`, `detached at 1a2b3c4`). */
  branch: string | null;
}

/** One file of the batch: its path and whether it now equals HEAD's version (gone, and not in HEAD's tree). */
export interface ChangedFile {
  path: string;
  equalsHead: boolean;
}

export interface MotionFacts {
  trail: GitTrail;
  /** When the batch was seen (the watcher's burst, or the rescan that found it). */
  seenAt: number;
  now: number;
  files: readonly ChangedFile[];
}

export type GitOperation =
  | 'branch switch'
  | 'checkout --'
  | 'reset'
  | 'stash'
  | 'rebase'
  | 'merge'
  | 'pull'
  | 'cherry-pick'
  | 'revert';

/**
 * `wait`: git is at work, or has written its index and may be about to write HEAD: look again in `ms`. `edit`:
 * the person's, sent as today. `git`: git's motion, named (`branch cleanup`, `git checkout -- on main`); `files`
 * are git's (they equal HEAD's tree), `edits` the person's among them (sent as today).
 */
export type Motion =
  | { kind: 'wait'; ms: number }
  | { kind: 'edit' }
  | { kind: 'git'; operation: GitOperation; name: string; files: string[]; edits: string[] };

/**
 * How far apart git's write and the changes it made may be seen. git writes its index within milliseconds of its
 * last file; the watcher's burst is looked at within 500 ms (the coalescer's longest wait); 5 s leaves room for a
 * loaded machine. A person's change of a file back to HEAD's version within 5 s of `git add` or an editor's `git
 * status` is held as git's too: asked, never lost.
 */
export const GIT_WRITE_WINDOW_MS = 5000;

/**
 * An index written this recently, with no reflog entry as recent, may be a branch switch whose HEAD is not written
 * yet (git writes it after the index): looked at once more before it is named `checkout --`.
 */
export const REF_UPDATE_MS = 200;

/** Looked at again this soon while git holds its index lock. */
export const BUSY_RETRY_MS = 100;

export function gitMotionOf(facts: MotionFacts): Motion {
  const { trail, seenAt, now, files } = facts;
  if (trail.busy) return { kind: 'wait', ms: BUSY_RETRY_MS };
  const near = (at: number | null | undefined): at is number =>
    at !== null && at !== undefined && Math.abs(at - seenAt) <= GIT_WRITE_WINDOW_MS;
  const headNear = near(trail.head?.at);
  const stashNear = near(trail.stash?.at);
  const indexNear = near(trail.indexAt);
  if (!headNear && !stashNear && !indexNear) return { kind: 'edit' };
  const gits = files.filter((file) => file.equalsHead).map((file) => file.path);
  if (gits.length === 0) return { kind: 'edit' };
  const edits = files.filter((file) => !file.equalsHead).map((file) => file.path);
  // The newest of git's writes near the batch says what it did. A reflog's time is whole seconds: an index written
  // more than a second after it is a later operation that writes no reflog (`checkout -- <paths>`, `restore`).
  const stash = stashNear ? trail.stash!.at : -Infinity;
  const head = headNear ? trail.head!.at : -Infinity;
  const reflog = Math.max(stash, head);
  const indexLater = indexNear && trail.indexAt! - reflog > 1000;
  if (!indexLater && stash >= head && stashNear)
    return named('stash', `git stash on ${trail.branch ?? 'this checkout'}`, gits, edits);
  if (!indexLater && headNear) {
    const operation = operationOf(trail.head!.message);
    // A commit moves no file: what equals HEAD now is what the person just committed.
    if (operation === null) return { kind: 'edit' };
    return named(operation, nameOf(operation, trail.branch), gits, edits);
  }
  if (now - trail.indexAt! < REF_UPDATE_MS) return { kind: 'wait', ms: REF_UPDATE_MS };
  return named('checkout --', nameOf('checkout --', trail.branch), gits, edits);
}

function named(operation: GitOperation, name: string, files: string[], edits: string[]): Motion {
  return { kind: 'git', operation, name, files, edits };
}

/** What a reflog message says git did; null: nothing that moves files (a commit, a new branch at HEAD). */
export function operationOf(message: string): GitOperation | null {
  if (/^checkout: moving from /.test(message)) return 'branch switch';
  if (/^reset: /.test(message)) return 'reset';
  if (/^rebase/.test(message)) return 'rebase';
  if (/^merge /.test(message)) return 'merge';
  if (/^pull/.test(message)) return 'pull';
  if (/^cherry-pick/.test(message)) return 'cherry-pick';
  if (/^revert/.test(message)) return 'revert';
  return null;
}

/** `branch cleanup`, `git checkout -- on main`, `rebase of feat-x`: what the person sees the change set as. */
export function nameOf(operation: GitOperation, branch: string | null): string {
  const on = branch ?? 'this checkout';
  switch (operation) {
    case 'branch switch':
      return `branch ${on}`;
    case 'rebase':
      return `rebase of ${on}`;
    case 'merge':
    case 'pull':
      return `${operation} into ${on}`;
    default:
      return `git ${operation} on ${on}`;
  }
}

/**
 * Whether git's motions wait for a person here: on a service that others write to (another checkout's or member's
 * name among the writers it lists) and with the repository's setting `ask`. On the embedded service, or a
 * repository nobody else writes to, they are sent as a person's edits are.
 */
export function holdsGitMotions(facts: {
  setting: 'ask' | 'send';
  /** Whether the service named a writer other than this checkout (remembered in the state once seen). */
  shared: boolean;
}): boolean {
  return facts.setting === 'ask' && facts.shared;
}

/** Whether a writer the service names is someone else: named, and not this checkout. */
export function isOtherWriter(writtenBy: string | null, me: string | undefined): boolean {
  return writtenBy !== null && writtenBy !== '' && writtenBy !== me;
}
