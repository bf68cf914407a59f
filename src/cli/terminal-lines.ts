/**
 * The lines `flowsync start` and `flowsync ui` print on the terminal (and `flowsync sync` its rounds): pure
 * functions of what the agent reports, each line said in the same words as the window and `status`.
 */
import { currentBranch, type BranchSwitch, type WatchedRepository } from '../agent/index.ts';
import type { ActivityEntry, FileChange } from '../window/index.ts';
import {
  inSyncOf,
  inSyncOfAll,
  NOT_SENT_REASONS,
  namedFlows,
  phaseWords,
  plural,
  warnedPath,
  type SyncFacts,
} from '../protocol/index.ts';
import {
  behindLine,
  type FreshLook,
  type SyncMiss,
  type SyncReport,
  type SyncStatus,
} from '../sync/index.ts';
import { clockTime, localTime } from './local-time.ts';
import { where } from './where.ts';

/**
 * What `start` says at stop, of every repository (inSyncOfAll), with when what waits goes: "everything was in sync"
 * only when it was (it was said over conflicts and held deletions, which needsOf knew and this line did not), and
 * the service was looked at just before (`notReached` otherwise: "in sync as of 14:02"). `newer`: the files newer on
 * the service, said with who wrote them (behindLine).
 */
export function stopLine(
  repos: readonly (SyncFacts & { newer?: readonly { writtenBy: string | null }[] })[],
): string {
  const { inSync, state, line } = inSyncOfAll(repos);
  if (inSync) return 'Stopped; everything was in sync.';
  if (state === 'pending' || state === 'sending') return `Stopped; ${line}, sent at the next start.`;
  const pending = repos.some((repo) => repo.counts.pending > 0);
  if (state === 'paused') return `Stopped; ${line}${pending ? ', sent when resumed' : ''}.`;
  if (state === 'behind') {
    const newer = behindLine(repos.flatMap((repo) => (repo.phase === 'elsewhere' ? [] : (repo.newer ?? []))));
    return newer === null
      ? `Stopped; ${line} (\`flowsync resolve --newer\` takes them).`
      : `Stopped; your changes are sent; ${newer}.`;
  }
  return `Stopped; ${line}.`;
}

/** A look at the service that did not go through, as inSyncOf reads it: since when the last one did (`14:02`). */
export function notReachedOf(look: FreshLook | undefined): SyncFacts['notReached'] {
  if (look?.failure == null) return null;
  return { since: look.at === null ? null : clockTime(look.at) };
}

/** `acme/app: flows/hello/logo.png not sent: binary (not UTF-8 text): add it to .gitignore` */
export function skippedLine(entry: ActivityEntry): string {
  const what =
    entry.flowPath === null || entry.path === null
      ? entry.message
      : `${warnedPath({ flowPath: entry.flowPath, path: entry.path })} not sent: ${entry.message}`;
  return `${lineTime()} ${where(entry.repository, currentBranch(entry.root))}: ${what}`;
}

/** A repository as a line names it: owner/name and the branch it is on now. */
export function named({ identity }: WatchedRepository): string {
  return where(identity, currentBranch(identity.root));
}

/** `acme/app: branch main → feat-x: 37 changed, 212 deletions held` (the rounds that followed the switch). */
export function branchLine({ identity }: WatchedRepository, switched: BranchSwitch): string {
  const { from, to, changed, heldDeletions, conflicts, refused } = switched;
  const parts = [
    `${changed} changed`,
    heldDeletions > 0 ? `${plural(heldDeletions, 'deletion')} held (flowsync sync --yes)` : '',
    conflicts > 0 ? `${conflicts} in conflict (flowsync conflicts)` : '',
    refused > 0 ? `${plural(refused, 'flow')} refused (see flowsync status)` : '',
  ].filter(Boolean);
  return (
    `${lineTime()} ${identity.owner}/${identity.name}: branch ${from ?? '(none)'} → ${to ?? '(none)'}: ` +
    parts.join(', ')
  );
}

/**
 * `acme/app (main): rescan (new folder): 3 changed files picked up and sent`. Said neutrally: the watcher is a
 * hint and the rescan the truth, and a rescan of a folder just made (at start, a checkout) finds its files before
 * the watcher's reports arrive; "the watcher missed" read as a bug report on that normal path.
 */
export function rescanLine(name: string, { files, reason }: SyncMiss): string {
  return `${name}: rescan (${reason}): ${plural(files, 'changed file')} picked up and sent`;
}

export function recoveryLine(files: number): string {
  return `Back in sync: ${plural(files, 'file')} sent`;
}

export function lineTime(): string {
  return new Date().toTimeString().slice(0, 8);
}

/** `acme/app (~/code/app): 2 flows, 12 files, in sync`; `about` comes before the counts (`… is there`). */
export function summary(
  { identity, engine }: WatchedRepository,
  status: SyncStatus,
  about?: string,
  configProblem: string | null = null,
): string {
  const nothing = engine.nothingToSync();
  // The line names the folder itself.
  if (nothing !== null)
    return `${where(identity, currentBranch(identity.root))}: ${about ? `${about}: ` : ''}${nothing}`;
  const { flows, files, pending, warnings, rejected, conflicts, behind } = status.counts;
  // Decided once (inSyncOf); what is not in sync is said below, each with the command that settles it. Behind:
  // what this checkout has is sent, and the files newer there are said below too.
  const verdict = inSyncOf({ ...status, configProblem });
  const extra = [
    verdict.inSync ? 'in sync' : verdict.state === 'behind' ? 'your changes are sent' : '',
    behind > 0 ? `${plural(behind, 'file')} newer on the service (flowsync resolve --newer)` : '',
    pending > 0 && status.paused ? `${pending} pending` : '',
    pending > 0 && !status.paused ? `${pending} pending${why(status)}` : '',
    status.paused
      ? `paused${status.pausedSince ? ` since ${localTime(status.pausedSince)}` : ''}, nothing sent until \`flowsync resume\``
      : '',
    conflicts > 0 ? `${conflicts} in conflict (flowsync conflicts)` : '',
    status.heldDeletions > 0 ? `${plural(status.heldDeletions, 'deletion')} held (flowsync sync --yes)` : '',
    status.notInCheckout > 0
      ? `${plural(status.notInCheckout, 'file')} on the service not in this checkout (flowsync resolve --not-in-checkout)`
      : '',
    configProblem ? configProblem : '',
    warnings > 0 ? `${warnings} not sent (${NOT_SENT_REASONS}; see flowsync status)` : '',
    rejected > 0 ? `${plural(rejected, 'flow')} refused by the service (see flowsync status)` : '',
  ].filter(Boolean);
  return `${where(identity, currentBranch(identity.root), identity.root)}: ${about ? `${about}: ` : ''}${plural(flows, 'flow')}, ${plural(files, 'file')}, ${extra.join(', ')}`;
}

/**
 * Why files are pending, after their count: the phase in its state's word and the engine's message (`(offline:
 * connect ECONNREFUSED)`); between rounds (`idle`, no state of its own) the message alone (`(96 deletions held …)`).
 */
function why({ phase, message }: SyncStatus): string {
  if (phase === 'idle') return message ? ` (${message})` : '';
  return ` (${phaseWords(phase)}${message ? `: ${message}` : ''})`;
}

/** A round that touched at most this many files names them; a larger one is counted. */
const NAMED_FILES = 3;

/**
 * One line per round; `files` (from the agent's activity, null when not read) names them for a small round. The
 * repository is named with its branch, and with the service when the command said it nowhere else (`sync`).
 */
export function syncLine(
  { identity }: WatchedRepository,
  report: SyncReport,
  files: readonly FileChange[] | null,
  branch: string | null,
  service?: string,
): string {
  const name = `${where(identity, branch)}${service ? ` with ${service}` : ''}`;
  if (report.requests === 0 && report.rejected.length === 0) return `${lineTime()} ${name}: up to date`;
  const rejected =
    report.rejected.map((r) => `; refused ${r.flowPath}: ${r.message}`).join('') +
    report.conflicts
      .map(
        (c) =>
          `; conflict ${c.flowPath}/${c.path}: changed on the service${c.writtenBy ? ` by ${c.writtenBy}` : ''}`,
      )
      .join('');
  if (files && files.length > 0 && files.length <= NAMED_FILES) {
    const named = files.map((file) => `${file.flowPath}/${file.path} ${file.kind}`).join(', ');
    return `${lineTime()} ${name}: ${named} in ${report.ms} ms${rejected}`;
  }
  return (
    `${lineTime()} ${name}: ${report.files.length > 0 ? namedFlows(report.files.map((file) => file.flowPath)) : plural(report.flows, 'flow')}, ` +
    `+${report.created} ~${report.updated} -${report.deleted} files in ${report.ms} ms${rejected}`
  );
}
