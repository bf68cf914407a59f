import { EventEmitter } from 'node:events';
import { describeFileWarning } from '../protocol/index.ts';
import type { SyncReport, SyncState, SyncStatus } from '../sync/index.ts';
import type { Agent, WatchedRepository } from './agent.ts';
import type { ActivityEntry } from './api/index.ts';

/** The window's Recent activity keeps this many entries; older ones drop off. */
export const ACTIVITY_LIMIT = 200;
/** A round that touched more files than this is one `sent` entry with counts, not a flood of lines. */
const FILE_DETAIL_LIMIT = 20;
/** Before a round of more flows than this, the acknowledged hashes are not read (an initial sync of 1,000 flows). */
const FLOW_DETAIL_LIMIT = 50;

type NewEntry = Omit<ActivityEntry, 'id' | 'at' | 'root' | 'repository' | 'counts'> &
  Partial<Pick<ActivityEntry, 'counts'>>;

/** A file a round sent: what the service took, by name. */
export interface FileChange {
  kind: 'created' | 'updated' | 'deleted';
  flowPath: string;
  path: string;
}

/** A round as the log saw it: the engine's report, and the files it touched (null when they were not read). */
export interface Round {
  repository: WatchedRepository;
  report: SyncReport;
  files: FileChange[] | null;
}

/**
 * The last ACTIVITY_LIMIT things that happened, newest last; emits `entry` for each new one, and `round` after
 * each round's entries (the CLI's line per sync names its files from it: one source for the window and the CLI).
 */
export class ActivityLog extends EventEmitter<{ entry: [ActivityEntry]; round: [Round] }> {
  private readonly entries: ActivityEntry[] = [];
  private nextId = 1;

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
  }

  roundDone(round: Round): void {
    this.emit('round', round);
  }

  /** Newest first, as the window lists them. */
  list(): ActivityEntry[] {
    return [...this.entries].reverse();
  }
}

/** Acknowledged hash of each file, by flow, as it was when a round started. */
type Acked = Map<string, Map<string, string | null>>;

/**
 * Feeds the log from the engines' events. The engine's report gives counts only, so the file names are derived
 * here: when a round starts (`syncing`) the acknowledged hashes of the pending flows are read, and when it ends
 * (`synced`) they are read again; what changed is what the service took. Reading which flows are pending costs a
 * round 6 ms at 100,000 files (measured on the 2-core build machine); a report that named the files would not.
 */
export function followActivity(agent: Agent, log: ActivityLog): void {
  const before = new Map<string, Acked | null>();
  /** Repositories whose service is unreachable, or whose folder is gone, since their last entry saying so. */
  const away = new Map<string, 'offline' | 'missing'>();
  /**
   * The files not sent of each repository, as of its last settled round. Taken first after the initial sync,
   * whose summary counts them; a file skipped after that is one `skipped` entry.
   */
  const notSent = new Map<string, Set<string>>();
  const back = (repository: WatchedRepository) => {
    if (away.delete(repository.identity.root))
      log.record(repository, { kind: 'online', flowPath: null, path: null, message: null });
  };

  agent.on('status', (repository, status: SyncStatus) => {
    const { root } = repository.identity;
    const { phase, message } = status;
    if (phase === 'syncing') before.set(root, ackedOfPending(agent.state, repository.engine.repoId));
    if (phase === 'missing' || phase === 'stopped') notSent.delete(root);
    else if (phase !== 'scanning' && phase !== 'syncing') noteSkipped(repository);
    if (phase === 'offline' || phase === 'unauthorized' || phase === 'missing') {
      const kind = phase === 'missing' ? 'missing' : 'offline';
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
    const warnings = agent.state.warnings(repository.engine.repoId);
    const key = (w: { flowPath: string; path: string; warning: string }) =>
      `${w.flowPath}\0${w.path}\0${w.warning}`;
    const known = notSent.get(root);
    notSent.set(root, new Set(warnings.map(key)));
    if (!known) return;
    const fresh = warnings.filter((warning) => !known.has(key(warning)));
    if (fresh.length > FILE_DETAIL_LIMIT) {
      const message = `${fresh.length} more files not sent (binary, over 1 MiB, links, FIFOs, hard links or unreadable now)`;
      log.record(repository, { kind: 'skipped', flowPath: null, path: null, message });
      return;
    }
    for (const { flowPath, path, warning } of fresh)
      log.record(repository, { kind: 'skipped', flowPath, path, message: describeFileWarning(warning) });
  };

  agent.on('synced', (repository, report: SyncReport) => {
    const { root } = repository.identity;
    back(repository);
    const snapshot = before.get(root) ?? null;
    before.delete(root);
    const changes = snapshot ? changedFiles(agent.state, repository.engine.repoId, snapshot) : null;
    if (changes && changes.length <= FILE_DETAIL_LIMIT) {
      for (const change of changes) log.record(repository, { ...change, message: null });
    } else if (report.created + report.updated + report.deleted > 0) {
      const { flows, created, updated, deleted } = report;
      log.record(repository, {
        kind: 'sent',
        flowPath: null,
        path: null,
        message: null,
        counts: { flows, created, updated, deleted },
      });
    }
    for (const { flowPath, message } of report.rejected)
      log.record(repository, { kind: 'refused', flowPath, path: null, message });
    log.roundDone({ repository, report, files: changes });
  });
}

function ackedOfPending(state: SyncState, repoId: number): Acked | null {
  const flows = state.pendingFlows(repoId);
  if (flows.length > FLOW_DETAIL_LIMIT) return null;
  const acked: Acked = new Map();
  for (const flowPath of flows)
    acked.set(flowPath, new Map(state.filesOfFlow(repoId, flowPath).map((f) => [f.path, f.ackedHash])));
  return acked;
}

function changedFiles(state: SyncState, repoId: number, before: Acked): FileChange[] {
  const changes: FileChange[] = [];
  for (const [flowPath, files] of before) {
    const after = new Map(state.filesOfFlow(repoId, flowPath).map((f) => [f.path, f.ackedHash]));
    for (const path of new Set([...files.keys(), ...after.keys()])) {
      const was = files.get(path) ?? null;
      const is = after.get(path) ?? null;
      if (was === is) continue;
      const kind = was === null ? 'created' : is === null ? 'deleted' : 'updated';
      changes.push({ kind, flowPath, path });
    }
  }
  return changes.sort((a, b) => `${a.flowPath}/${a.path}`.localeCompare(`${b.flowPath}/${b.path}`));
}
