import { TAKEN_WORDS, incomingCounts, plural } from '../../protocol/index.ts';
import type { TakenFile } from '../../sync/index.ts';
import type { WatchedRepository } from '../../agent/index.ts';
import type { ActivityLog } from '../activity.ts';
import type { keptViews } from './helpers.ts';

/** A take of more files than this is one entry with the counts (the CLI lists every file). */
const TAKEN_NAMED = 5;

/**
 * Every take of the team's changes is in Recent activity, and so a line in the running agent's terminal
 * (217 files deleted by one click must be said somewhere): a few files each, more as one entry with the counts.
 */
export function takenEntries(
  activity: ActivityLog,
  watched: WatchedRepository,
  taken: readonly TakenFile[],
): void {
  if (taken.length === 0) return;
  if (taken.length > TAKEN_NAMED) {
    const message = `${plural(taken.length, 'file')} taken from the service: ${incomingCounts(taken)}`;
    activity.record(watched, { kind: 'taken', flowPath: null, path: null, message });
    return;
  }
  for (const { flowPath, path, change } of taken)
    activity.record(watched, { kind: 'taken', flowPath, path, message: TAKEN_WORDS[change] });
}

/**
 * What its user settled, in Recent activity: a line per file (with where its bytes here were kept), or one line
 * for many; a copy kept is always its own line, so that it can be found.
 */
export function settledEntries(
  activity: ActivityLog,
  watched: WatchedRepository,
  files: readonly { flowPath: string; path: string }[],
  kept: ReturnType<typeof keptViews>,
  what: string,
): void {
  const keptAt = new Map(kept.map((file) => [`${file.flowPath}/${file.path}`, file.where]));
  if (files.length > 20) {
    activity.record(watched, {
      kind: 'settled',
      flowPath: null,
      path: null,
      message: `${plural(files.length, 'conflict')} settled: ${what}`,
    });
  } else {
    for (const { flowPath, path } of files) {
      const where = keptAt.get(`${flowPath}/${path}`);
      keptAt.delete(`${flowPath}/${path}`);
      const message = where ? `${what}; yours is ${where}` : what;
      activity.record(watched, { kind: 'settled', flowPath, path, message });
    }
  }
  for (const [file, where] of keptAt) {
    const slash = file.lastIndexOf('/');
    activity.record(watched, {
      kind: 'settled',
      flowPath: file.slice(0, slash),
      path: file.slice(slash + 1),
      message: `what was on disk is ${where}`,
    });
  }
}
