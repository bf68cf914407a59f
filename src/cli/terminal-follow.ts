/**
 * What the terminal of `flowsync start` and `flowsync ui` says while the agent runs: one line per round, per
 * change of a repository's state, and per thing its user settles, from the agent's Recent activity and its
 * engines' statuses, in the words the window uses.
 */
import {
  currentBranch,
  REPO_CONFIG_FILE,
  repoConfigProblem,
  type Agent,
  type WatchedRepository,
} from '../agent/index.ts';
import type { ActivityLog } from '../window/index.ts';
import { folderGone, phaseWords, plural, serviceAway } from '../protocol/index.ts';
import { newerClearedLine, type FileConflict, type SyncStatus } from '../sync/index.ts';
import {
  branchLine,
  lineTime,
  named,
  recoveryLine,
  rescanLine,
  skippedLine,
  summary,
  syncLine,
} from './terminal-lines.ts';

type Out = (line: string) => void;

/**
 * The summary of every repository after the first sync, and the lines of its repository config as it changes
 * (a hand edit the schema refuses is not sent: said here, not only in the window). Returns what each
 * repository-config line said last, which the stop line reads.
 */
export function followRepositories(agent: Agent, out: Out): ReadonlyMap<string, string | null> {
  // What each repository-config line said last: a change is said once, and the one at start in its summary.
  const configLines = new Map<string, string | null>();
  const summed = (watched: WatchedRepository, about?: string) => {
    const problem = repoConfigProblem(watched.identity.root);
    configLines.set(watched.identity.root, problem);
    return summary(watched, watched.engine.status(), about, problem);
  };
  for (const watched of agent.watched()) out(summed(watched));
  // A folder that was not there at start is there now (the drive is mounted), and its first round is done.
  agent.on('found', (watched) =>
    out(`${lineTime()} ${summed(watched, `${watched.identity.root} is there`)}`),
  );
  agent.on('repo-config', (watched, problem) => {
    if (configLines.get(watched.identity.root) === problem) return;
    configLines.set(watched.identity.root, problem);
    out(`${lineTime()} ${named(watched)}: ${problem ?? `${REPO_CONFIG_FILE} is valid again`}`);
  });
  return configLines;
}

/** The lines of what happens, from the agent's Recent activity and its events. */
export function followActivity(agent: Agent, activity: ActivityLog, out: Out): void {
  // Both from the agent's Recent activity, as the window shows them: the files a round sent, and files newly skipped.
  // The rounds after a branch switch are one line of their own, when they are done.
  activity.on('round', ({ repository, report, files }) => {
    const { root } = repository.identity;
    if (!agent.switchingBranch(root)) out(syncLine(repository, report, files, currentBranch(root)));
  });
  agent.on('branch', (watched, switched) => out(branchLine(watched, switched)));
  agent.on('renamed', (_, message) => out(`${lineTime()} ${message}`));
  agent.on('gitChanges', (watched, line) => out(`${lineTime()} ${named(watched)}: ${line}`));
  agent.on('repoConfig', (watched, line) => out(`${lineTime()} ${named(watched)}: ${line}`));
  activity.on('entry', (entry) => {
    if (entry.kind === 'skipped') out(skippedLine(entry));
    if (entry.kind === 'paused')
      out(
        `${lineTime()} ${entry.repository}: paused; changes are counted and sent when resumed (flowsync resume ${entry.root})`,
      );
    if (entry.kind === 'resumed')
      out(`${lineTime()} ${entry.repository}: resumed${entry.message ? `: ${entry.message}` : ''}`);
    // Deletions held, and what its user settled (where a replaced edit was kept): always a line.
    if (entry.kind === 'held') out(`${lineTime()} ${entry.repository}: ${entry.message}`);
    // A teammate's version waited and the file was changed here: a conflict, said at once.
    if (entry.kind === 'conflict-here')
      out(
        `${lineTime()} ${entry.repository}: ${entry.flowPath}/${entry.path}: changed here and on the service: a conflict; \`flowsync conflicts\``,
      );
    if (entry.kind === 'taken')
      out(
        `${lineTime()} ${entry.repository}: ${entry.flowPath === null ? '' : `${entry.flowPath}/${entry.path}: `}${entry.message}`,
      );
    if (entry.kind === 'settled')
      out(
        `${lineTime()} ${entry.repository}: ${entry.flowPath === null ? '' : `${entry.flowPath}/${entry.path}: `}${entry.message}`,
      );
  });
}

/** The lines of each repository's state as its engine reports it: said when it changes, once while it lasts. */
export function followStatus(agent: Agent, out: Out): void {
  const phases = new Map<WatchedRepository, SyncStatus['phase']>();
  const storageLines = new Map<WatchedRepository, string | null>();
  /** The signed-out line said last, per repository: a round a minute meets the same refusal, said once. */
  const signedOutLines = new Map<WatchedRepository, string | null>();
  // Each engine says when it is back in sync after an outage; repositories added later are followed too.
  const recovering = new WeakSet<WatchedRepository>();
  const followRecovery = (watched: WatchedRepository) => {
    if (recovering.has(watched)) return;
    recovering.add(watched);
    watched.engine.on('recovered', ({ files }) =>
      out(`${lineTime()} ${named(watched)}: ${recoveryLine(files)}`),
    );
    // A rescan that found what the watcher missed is said, never silent.
    watched.engine.on('missed', (miss) => out(`${lineTime()} ${rescanLine(named(watched), miss)}`));
  };
  for (const watched of agent.watched()) followRecovery(watched);
  // Files newer on the service (a teammate's edits, untouched here): a line when their count changes to some, and
  // one when it is back to none, with why (taken, pulled, reverted there). A service gone back in time:
  // its line once, when it is first seen (and again if it comes back after it cleared).
  const newerCounts = new Map<WatchedRepository, number>();
  /** The files newer there since the count was last 0, read when it changes: what the line at 0 says why of. */
  const newerSeen = new Map<WatchedRepository, Map<string, FileConflict>>();
  const wentBack = new Map<WatchedRepository, string | null>();
  agent.on('status', (watched, status) => {
    followRecovery(watched);
    const newer = status.counts.behind;
    const before = newerCounts.get(watched) ?? 0;
    if (newer !== before) {
      newerCounts.set(watched, newer);
      const seen = newerSeen.get(watched) ?? new Map<string, FileConflict>();
      newerSeen.set(watched, seen);
      if (newer > 0) {
        for (const file of watched.engine.service.newer()) seen.set(`${file.flowPath}\0${file.path}`, file);
        const line = watched.engine.service.newerLine();
        if (line !== null) out(`${lineTime()} ${named(watched)}: ${line}`);
      } else if (before > 0) {
        const why = watched.engine.service.noLongerNewer([...seen.values()]);
        seen.clear();
        out(`${lineTime()} ${named(watched)}: ${newerClearedLine(why)}`);
      }
    }
    if (status.phase === 'idle') {
      const line = watched.engine.service.wentBackLine();
      if (line !== (wentBack.get(watched) ?? null)) {
        wentBack.set(watched, line);
        if (line !== null) out(`${lineTime()} ${named(watched)}: ${line}`);
      }
    }
    const previous = phases.get(watched);
    phases.set(watched, status.phase);
    const name = named(watched);
    if (status.phase !== 'storage' && status.phase !== 'scanning') storageLines.delete(watched);
    if (status.phase === 'idle') signedOutLines.delete(watched);
    if (status.phase === previous) return;
    if (status.phase === 'unauthorized') {
      // Said once while it lasts: a round a minute meets the same refusal, and is not said again.
      if (status.message === signedOutLines.get(watched)) return;
      signedOutLines.set(watched, status.message);
      out(
        `${lineTime()} ${name}: ${phaseWords('unauthorized')}, ${plural(status.counts.pending, 'file')} pending: ${status.message ?? ''}`,
      );
    } else if (serviceAway(status.phase)) {
      const wait = status.retryAt
        ? ` retrying in ${Math.max(1, Math.round((status.retryAt - Date.now()) / 1000))} s`
        : '';
      out(
        `${lineTime()} ${name}: ${phaseWords(status.phase)}, ${plural(status.counts.pending, 'file')} pending;${wait}: ${status.message ?? ''}`,
      );
    } else if (status.phase === 'missing') {
      out(`${lineTime()} ${name}: ${status.message ?? folderGone(watched.identity.root)}`);
    } else if (status.phase === 'storage' && status.message !== storageLines.get(watched)) {
      // Each retry scans (phase 'scanning') and fails again: a line only when the count or the fault changed.
      storageLines.set(watched, status.message);
      out(`${lineTime()} ${name}: ${status.message ?? 'the data folder cannot be written'}`);
    }
  });
}
