import { EventEmitter } from 'node:events';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { z } from 'zod';
import type { Agent, WatchedRepository } from '../agent/index.ts';
import { logUnexpected, replaceFile } from '../host/index.ts';
import { NOT_SENT_REASONS, describeFileWarning, namedFlows, plural, serviceAway } from '../protocol/index.ts';
import type { FileChange, SyncReport, SyncStatus } from '../sync/index.ts';
import { activityEntrySchema, type ActivityEntry } from './contract.ts';

/** The window's Recent activity keeps this many entries; older ones drop off. */
export const ACTIVITY_LIMIT = 200;
/** A round that touched more files than this is one `sent` entry with counts, not a flood of lines. */
const FILE_DETAIL_LIMIT = 20;
/** The file in flowsync's data folder that keeps Recent activity across restarts. */
export const ACTIVITY_FILE = 'activity.json';
/**
 * How long after an entry the file is written: a burst of entries (a round of 20 files is 20) is one write, and a
 * crash loses at most this much of the list (the sync itself is in the state, not here).
 */
const KEEP_AFTER_MS = 500;

const keptSchema = z.object({ entries: z.array(z.unknown()) });

type NewEntry = Omit<ActivityEntry, 'id' | 'at' | 'root' | 'repository' | 'counts'> &
  Partial<Pick<ActivityEntry, 'counts'>>;

export type { FileChange };

/** A round as the log saw it: the engine's report, with the files the service acknowledged. */
export interface Round {
  repository: WatchedRepository;
  report: SyncReport;
  files: FileChange[];
}

/**
 * The last ACTIVITY_LIMIT things that happened, newest last; emits `entry` for each new one, and `round` after
 * each round's entries (the CLI's line per sync names its files from it: one source for the window and the CLI).
 */
export class ActivityLog extends EventEmitter<{ entry: [ActivityEntry]; round: [Round] }> {
  private readonly entries: ActivityEntry[] = [];
  private nextId = 1;
  private keepTimer: NodeJS.Timeout | null = null;
  /** Whether entries were recorded since the file was last written. */
  private unkept = false;

  /**
   * `keptIn`: the data folder whose activity.json holds the list across restarts (read now, written shortly after
   * each entry and at close); none: kept in memory only.
   */
  constructor(private readonly keptIn: string | null = null) {
    super();
    if (keptIn === null) return;
    this.entries.push(...keptEntries(join(keptIn, ACTIVITY_FILE)));
    this.nextId = Math.max(0, ...this.entries.map((entry) => entry.id)) + 1;
  }

  record(repository: WatchedRepository, entry: NewEntry): void {
    const full: ActivityEntry = {
      id: this.nextId++,
      at: new Date().toISOString(),
      root: repository.identity.root,
      repository: `${repository.identity.owner}/${repository.identity.name}`,
      counts: null,
      ...entry,
    };
    this.entries.push(full);
    if (this.entries.length > ACTIVITY_LIMIT) this.entries.shift();
    this.emit('entry', full);
    this.keepSoon();
  }

  roundDone(round: Round): void {
    this.emit('round', round);
  }

  /** Newest first, as the window lists them. */
  list(): ActivityEntry[] {
    return [...this.entries].reverse();
  }

  /** Writes what waits to be kept now (the agent stops); nothing when nothing does. */
  keep(): void {
    if (this.keepTimer !== null) clearTimeout(this.keepTimer);
    this.keepTimer = null;
    if (!this.unkept || this.keptIn === null) return;
    this.unkept = false;
    try {
      // Private, as everything in the data folder: file and repository names, teammates' names.
      replaceFile(join(this.keptIn, ACTIVITY_FILE), `${JSON.stringify({ entries: this.entries })}\n`, 0o600);
    } catch (error) {
      // A full or read-only disk: the list is still in memory and shown; the next entry tries again.
      this.unkept = true;
      logUnexpected('keeping Recent activity')(error);
    }
  }

  private keepSoon(): void {
    if (this.keptIn === null) return;
    this.unkept = true;
    if (this.keepTimer !== null) return;
    this.keepTimer = setTimeout(() => this.keep(), KEEP_AFTER_MS);
    this.keepTimer.unref();
  }
}

/**
 * The entries activity.json kept, newest last: each one checked as the window's contract says an entry is, one that
 * is not (a file from another version, edited, cut short by a full disk) left out. A file missing or unreadable is
 * an empty list: what it holds is a record of what happened, not of what is to sync.
 */
function keptEntries(file: string): ActivityEntry[] {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch {
    return [];
  }
  let kept: unknown;
  try {
    kept = JSON.parse(text);
  } catch {
    return [];
  }
  const parsed = keptSchema.safeParse(kept);
  if (!parsed.success) return [];
  return parsed.data.entries
    .flatMap((entry) => {
      const valid = activityEntrySchema.safeParse(entry);
      return valid.success ? [valid.data] : [];
    })
    .slice(-ACTIVITY_LIMIT);
}

const logs = new WeakMap<Agent, ActivityLog>();

/**
 * The Recent activity of an agent, following it from the first time it is asked for (the command that opens the
 * agent asks at once, so that its first sync is in it). `keptIn`, on that first ask: the data folder that keeps
 * the list across restarts (`flowsync start` and `ui` give theirs).
 */
export function activityOf(agent: Agent, keptIn: string | null = null): ActivityLog {
  let log = logs.get(agent);
  if (!log) {
    log = new ActivityLog(keptIn);
    logs.set(agent, log);
    followActivity(agent, log);
  }
  return log;
}

/**
 * Feeds the log from the agent's events. A round's files come with its report, from the uploader that had the
 * service's acknowledgement in hand (this read the state twice per round to rebuild them, and gave up past 50 flows).
 */
function followActivity(agent: Agent, log: ActivityLog): void {
  /** Repositories whose service is unreachable, or whose folder is gone, since their last entry saying so. */
  const away = new Map<string, 'offline' | 'unavailable' | 'signed-out' | 'missing'>();
  /**
   * The files not sent of each repository, as of its last round. Taken first after the initial sync,
   * whose summary counts them; a file skipped after that is one `skipped` entry.
   */
  const notSent = new Map<string, Set<string>>();
  const back = (repository: WatchedRepository) => {
    if (away.delete(repository.identity.root))
      log.record(repository, { kind: 'online', flowPath: null, path: null, message: null });
  };

  /**
   * Whether each repository was paused by its user, as of its last status: an entry when that changes (not for the
   * first status: a repository paused before the agent started is not paused now).
   */
  const paused = new Map<string, boolean>();
  /** The deletions held of each repository at its last status: a new count is an entry. */
  const held = new Map<string, number>();
  agent.on('status', (repository, status: SyncStatus) => {
    const { root } = repository.identity;
    const { phase, message } = status;
    const wasHeld = held.get(root) ?? 0;
    held.set(root, status.heldDeletions);
    // An `rm` of 150 files printed nothing and said nothing here: held deletions are always told, once per count.
    if (status.heldDeletions > 0 && status.heldDeletions !== wasHeld)
      log.record(repository, {
        kind: 'held',
        flowPath: null,
        path: null,
        message:
          `${plural(status.heldDeletions, 'deletion')} held, more than this repository deletes without asking; ` +
          `nothing deleted on the service: \`flowsync sync --yes ${root}\` deletes them there, ` +
          `\`flowsync resolve --held --theirs ${root}\` puts them back on disk`,
      });
    const was = paused.get(root);
    paused.set(root, status.paused);
    if (was !== undefined && was !== status.paused) {
      const waiting = status.counts.pending;
      log.record(repository, {
        kind: status.paused ? 'paused' : 'resumed',
        flowPath: null,
        path: null,
        message: status.paused
          ? null
          : waiting > 0
            ? `sending ${plural(waiting, 'change')} made while paused`
            : null,
      });
    }
    if (phase === 'missing' || phase === 'stopped') notSent.delete(root);
    else if (phase !== 'scanning' && phase !== 'syncing') noteSkipped(repository);
    if (serviceAway(phase) || phase === 'unauthorized' || phase === 'missing') {
      // A service that answers 5xx or 429 is not offline: its user would look at their network for nothing.
      const kind =
        phase === 'missing'
          ? 'missing'
          : phase === 'unavailable'
            ? 'unavailable'
            : phase === 'unauthorized'
              ? 'signed-out'
              : 'offline';
      if (away.get(root) !== kind) log.record(repository, { kind, flowPath: null, path: null, message });
      away.set(root, kind);
    } else if (phase === 'stopped') {
      away.delete(root);
    } else if (away.get(root) === 'missing') {
      // The folder is back and being scanned. Back from offline is told by the next `synced` instead: edits
      // made while offline are scanned too, and that says nothing of the service.
      back(repository);
    }
  });

  const noteSkipped = (repository: WatchedRepository) => {
    const { root } = repository.identity;
    const warnings = agent.notSent(root);
    const key = (w: { flowPath: string; path: string; warning: string }) =>
      `${w.flowPath}\0${w.path}\0${w.warning}`;
    const known = notSent.get(root);
    // Every file told so far stays told: a branch switch takes skipped files away and brings them back, and each
    // was told again ("branch switches that repeat every skipped file"). Status and the window still list them all.
    notSent.set(root, new Set([...(known ?? []), ...warnings.map(key)]));
    if (!known) return;
    const fresh = warnings.filter((warning) => !known.has(key(warning)));
    if (fresh.length > FILE_DETAIL_LIMIT) {
      const message = `${fresh.length} more files not sent (${NOT_SENT_REASONS})`;
      log.record(repository, { kind: 'skipped', flowPath: null, path: null, message });
      return;
    }
    for (const { flowPath, path, warning } of fresh)
      log.record(repository, { kind: 'skipped', flowPath, path, message: describeFileWarning(warning) });
  };

  /**
   * The files newer on the service of each repository (keys), with the counts they were read at: one changed here
   * since is a conflict now, said at once, not listed as behind (where "--theirs takes it" would replace the edit).
   * Read again only when a status brings other counts of either.
   */
  const behind = new Map<string, { keys: Set<string>; behind: number; conflicts: number }>();
  const noteConflictsHere = (repository: WatchedRepository, status: SyncStatus) => {
    const { root } = repository.identity;
    const last = behind.get(root);
    const { behind: newer, conflicts } = status.counts;
    if (last !== undefined && last.behind === newer && last.conflicts === conflicts) return;
    const key = (file: { flowPath: string; path: string }) => `${file.flowPath}\0${file.path}`;
    behind.set(root, {
      keys: new Set(newer === 0 ? [] : repository.engine.service.newer().map(key)),
      behind: newer,
      conflicts,
    });
    if (last === undefined || last.keys.size === 0 || conflicts === 0) return;
    for (const file of becameConflicts(last.keys, agent.conflicts(root), key))
      log.record(repository, {
        kind: 'conflict-here',
        flowPath: file.flowPath,
        path: file.path,
        message: file.writtenBy,
      });
  };
  agent.on('status', (repository, status: SyncStatus) => {
    if (status.phase !== 'missing' && status.phase !== 'stopped') noteConflictsHere(repository, status);
  });

  agent.on('synced', (repository, report: SyncReport) => {
    back(repository);
    const changes = report.files;
    if (changes.length > 0 && changes.length <= FILE_DETAIL_LIMIT) {
      for (const change of changes) log.record(repository, { ...change, message: null });
    } else if (report.created + report.updated + report.deleted > 0) {
      const { flows, created, updated, deleted } = report;
      log.record(repository, {
        kind: 'sent',
        flowPath: null,
        path: null,
        // Which flows, by name (the window said "Sent 1 flow: 0 new, 0 changed, 123 deleted").
        message: changes.length > 0 ? namedFlows(changes.map((change) => change.flowPath)) : null,
        counts: { flows, created, updated, deleted },
      });
    }
    for (const { flowPath, message } of report.rejected)
      log.record(repository, { kind: 'refused', flowPath, path: null, message });
    for (const { flowPath, path, writtenBy } of report.conflicts)
      log.record(repository, { kind: 'conflict', flowPath, path, message: writtenBy });
    log.roundDone({ repository, report, files: changes });
  });
}

/** The files in conflict now that were newer on the service (behind) before: changed here since, so conflicts. */
export function becameConflicts<T extends { flowPath: string; path: string }>(
  behindBefore: ReadonlySet<string>,
  conflictsNow: readonly T[],
  key: (file: T) => string,
): T[] {
  return conflictsNow.filter((file) => behindBefore.has(key(file)));
}
