import { folderGone } from './folder-gone.ts';
import { plural } from './plural.ts';

/**
 * The desktop notifications of flowsync, decided once for the browser window (the Notification API) and the desktop
 * app (Electron's main process): a notification for each entry into a state that waits for its user, never for a
 * sync, never twice while the state lasts. Here in src/protocol because both the renderer and electron/ import it.
 */

/**
 * What needsOf reads of a repository: the engine's status, the window's RepositoryView and `status`'s live view
 * each have all of it.
 */
export interface WaitingFacts {
  counts: { conflicts: number };
  heldDeletions: number;
  /** Files the service has that this checkout never had (kept there until its user says delete or write them). */
  notInCheckout: number;
  /** What is wrong with its hand-edited `.flowsync/repo-config.json` (not sent until fixed); null when nothing. */
  configProblem?: string | null;
  /** Git's motions held for their user on a shared service: each change set, named (absent: none). */
  gitChanges?: readonly GitChangeSetView[];
}

/** A change set of git's waiting for its user: `branch cleanup: 37 changed, 217 deleted`. */
export interface GitChangeSetView {
  name: string;
  changed: number;
  deleted: number;
}

/** `branch cleanup: 37 changed, 217 deleted`, `git checkout -- on main: 2 changed`. */
export function changeSetWords(set: GitChangeSetView): string {
  const parts = [
    ...(set.changed > 0 || set.deleted === 0 ? [`${set.changed} changed`] : []),
    ...(set.deleted > 0 ? [`${set.deleted} deleted`] : []),
  ];
  return `${set.name}: ${parts.join(', ')}`;
}

/** What the decision reads of a repository's status: the window's RepositoryView has all of it. */
export interface RepositoryNeeds extends WaitingFacts {
  root: string;
  owner: string;
  name: string;
  phase: string;
  message: string | null;
}

/** One kind of thing that waits for its user in a repository, with how many and the words for it. */
export interface Waiting {
  kind: 'conflict' | 'held-deletions' | 'not-in-checkout' | 'repo-config' | 'git-changes';
  count: number;
  /** `2 in conflict`, `40 deletions held`, `3 files not in this checkout`, `repo-config.json not valid`. */
  words: string;
}

/**
 * What waits for its user in a repository, decided once for every place that says it (the tray, the window's card
 * badge, `start`'s lines and "in sync", `status`'s exit code): nothing of these settles by itself, so a repository
 * with any of them is never "in sync" nor "idle". Empty when nothing waits. (It once sat in 7 places with 3 lists,
 * and the tray, the exit code and "in sync" forgot the files not in this checkout.)
 */
export function needsOf(repo: WaitingFacts): Waiting[] {
  const sets = repo.gitChanges ?? [];
  const needs = waiting({
    conflict: repo.counts.conflicts,
    'held-deletions': repo.heldDeletions,
    'not-in-checkout': repo.notInCheckout,
    'repo-config': repo.configProblem ? 1 : 0,
    'git-changes': 0,
  });
  // Named by the change set (`branch cleanup: 37 changed, 217 deleted`): the words say which of git's motions waits.
  if (sets.length > 0)
    needs.push({
      kind: 'git-changes',
      count: sets.reduce((files, set) => files + set.changed + set.deleted, 0),
      words: `${sets.map(changeSetWords).join('; ')} (git's, not sent)`,
    });
  return needs;
}

/** needsOf over several repositories, each kind summed (`3 in conflict, 1 deletion held`): the tray's words. */
export function needsOfAll(repos: readonly WaitingFacts[]): Waiting[] {
  const summed = {
    conflict: 0,
    'held-deletions': 0,
    'not-in-checkout': 0,
    'repo-config': 0,
    'git-changes': 0,
  };
  for (const need of repos.flatMap(needsOf)) summed[need.kind] += need.count;
  return waiting(summed);
}

const WORDS: Record<Waiting['kind'], (count: number) => string> = {
  conflict: (count) => `${count} in conflict`,
  'held-deletions': (count) => `${plural(count, 'deletion')} held`,
  'not-in-checkout': (count) => `${plural(count, 'file')} not in this checkout`,
  'repo-config': (count) =>
    count === 1 ? 'repo-config.json not valid' : `${count} repo-config.json files not valid`,
  'git-changes': (count) => `${plural(count, 'change')} of git's held`,
};

function waiting(counts: Record<Waiting['kind'], number>): Waiting[] {
  return (Object.keys(WORDS) as Waiting['kind'][])
    .filter((kind) => counts[kind] > 0)
    .map((kind) => ({ kind, count: counts[kind], words: WORDS[kind](counts[kind]) }));
}

/** The states that wait for the user: nothing syncs past them until the user acts. */
export type Need = 'conflict' | 'held-deletions' | 'signed-out' | 'folder-gone';

export interface DesktopNotification {
  /** One per repository and state (signed out: one for the agent, whose token it is); a `tag` that replaces. */
  key: string;
  need: Need;
  /** The repository that waits; null for signed out, which is the agent's. */
  root: string | null;
  /** owner/name, or null with root. */
  repository: string | null;
  title: string;
  /** One line: what happened and what to do. */
  body: string;
}

/**
 * The notifications to show now that the status went from `before` to `now` (each the status's repositories): one
 * per state entered. `before` null is the first status seen (a window opened, an app started): what already waits
 * then is on the screen and the tray, not news, so it notifies nothing. A repository new since `before` (added)
 * enters what it is in. Counts changing inside a state (2 conflicts, then 3) are the same state. A repository
 * paused (its held deletions are not counted again until resumed), stopped or still looking (scanning) tells
 * nothing new.
 */
export function desktopNotifications(
  before: readonly RepositoryNeeds[] | null,
  now: readonly RepositoryNeeds[],
): DesktopNotification[] {
  if (before === null) return [];
  const was = new Map(before.map((repo) => [repo.root, repo]));
  const notifications: DesktopNotification[] = [];
  // The token is the agent's, for every repository: the first to be refused says it for all.
  if (now.some(signedOut) && !before.some(signedOut)) notifications.push(signedOutNotification());
  for (const repo of now.filter(known)) {
    const previous = was.get(repo.root);
    for (const need of REPOSITORY_NEEDS) {
      if (NEEDS[need](repo) && !(previous && NEEDS[need](previous)))
        notifications.push(repositoryNotification(need, repo));
    }
  }
  return notifications;
}

/**
 * desktopNotifications over a stream of statuses (the window's, the desktop app's): called with each status's
 * repositories, it returns what to show, the first call nothing.
 */
export function followNeeds(): (now: readonly RepositoryNeeds[]) => DesktopNotification[] {
  let before: readonly RepositoryNeeds[] | null = null;
  return (now) => {
    const due = desktopNotifications(before, now);
    // A repository not synced (another checkout is its source: no engine, 0 held) or mid-scan (a rescan has not
    // counted them yet) keeps what it waited for before, or resuming one with 40 deletions held would say them again.
    // The first status is what already waits, every repository of it (one paused then was taken for new later).
    const was = new Map((before ?? now).map((repo) => [repo.root, repo]));
    before = now.flatMap((repo) => (known(repo) ? [repo] : (was.get(repo.root) ?? [])));
    return due;
  };
}

/**
 * Whether a repository's status says what waits in it: not while paused, stopped or still looking, nor while the
 * service is away or the state cannot be written (a flow root held shows as `missing` only when neither, and every
 * outage said "its folder is gone" again). Signed out (`unauthorized`) is known: it is a need of its own.
 */
const known = (repo: RepositoryNeeds) =>
  !['paused', 'elsewhere', 'stopped', 'scanning', 'offline', 'unavailable', 'storage'].includes(repo.phase);

const REPOSITORY_NEEDS = ['folder-gone', 'conflict', 'held-deletions'] as const;

const signedOut = (repo: RepositoryNeeds) => repo.phase === 'unauthorized';

/** The notifications follow needsOf: the same rule says what waits, here and on the card. */
const NEEDS: Record<(typeof REPOSITORY_NEEDS)[number], (repo: RepositoryNeeds) => boolean> = {
  'folder-gone': (repo) => repo.phase === 'missing',
  conflict: (repo) => needsOf(repo).some((need) => need.kind === 'conflict'),
  'held-deletions': (repo) => needsOf(repo).some((need) => need.kind === 'held-deletions'),
};

function signedOutNotification(): DesktopNotification {
  return {
    key: 'signed-out',
    need: 'signed-out',
    root: null,
    repository: null,
    title: 'flowsync is signed out',
    body: 'The service refused its token, so nothing is sent: sign in again in Settings, or run flowsync login.',
  };
}

function repositoryNotification(need: (typeof REPOSITORY_NEEDS)[number], repo: RepositoryNeeds) {
  const repository = `${repo.owner}/${repo.name}`;
  const words = {
    'folder-gone': {
      title: `${repository}: its folder is gone`,
      // The engine's own line (folderGone, or why the folder does not count, such as a file in its place).
      body: repo.message ?? folderGone(repo.root),
    },
    conflict: {
      title: `${repository}: ${plural(repo.counts.conflicts, 'file')} in conflict`,
      body: "Changed on the service since this checkout synced: open Waiting for you to keep yours or take the service's.",
    },
    'held-deletions': {
      title: `${repository}: ${plural(repo.heldDeletions, 'deletion')} held`,
      body: 'More deleted at once than this repository deletes without asking: open Waiting for you to delete them on the service or restore them.',
    },
  }[need];
  return {
    key: `${need} ${repo.root}`,
    need,
    root: repo.root,
    repository,
    ...words,
  } satisfies DesktopNotification;
}
