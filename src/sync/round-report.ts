import type { GitChangeSet } from './state-motions.ts';
import type { RepoCounts } from './state-records.ts';
import type { FlowPlan } from './planner.ts';
import type { FileChange, UploadTally } from './uploader.ts';
import type { SyncPhase } from './engine-status.ts';

/*
 * What the engine tells its owner (the engine file is the loop only): its status, its progress, a round's
 * report, a dry run's plan, and the pure helpers that build a report from the uploader's tallies.
 */

export interface SyncStatus {
  phase: SyncPhase;
  counts: RepoCounts;
  /** Why the engine is offline, unauthorized, missing or cannot write its state; null otherwise. */
  message: string | null;
  /** When the next attempt is due, while offline (or backing off). */
  retryAt: number | null;
  /** Files the rescans found changed, new or gone that the watcher had not reported, since the engine started. */
  missed: number;
  /** Deletions waiting for their user to say delete them (or restore them on disk); 0 when none is held. */
  heldDeletions: number;
  /** Files the service holds that this checkout never had, from the last check of the service (0: none, or unknown). */
  notInCheckout: number;
  /** Whether its user paused the repository (whatever the phase says meanwhile: a scan, the folder missing). */
  paused: boolean;
  /** Since when it is paused (ISO time); null when not paused, or paused by an older flowsync that did not say. */
  pausedSince: string | null;
  /** The line that says none of its flow folders is there (nothing to sync, and where to fix it); else null. */
  nothingToSync: string | null;
  /** Git's change sets held for their user; empty when none. Read from the state when looked at. */
  gitChanges: GitChangeSet[];
}

/** A rescan that found what the watcher missed: "rescan found 3 files the watcher missed (periodic)". */
export interface SyncMiss {
  files: number;
  /** What asked for the rescan: `periodic`, `new folder`, `flows came back`, `watcher error`. */
  reason: string;
}

export interface SyncProgress {
  stage: 'hashing' | 'uploading';
  done: number;
  total: number;
}

/** One round of uploads, for the line `flowsync start` prints. */
export interface SyncReport {
  /** The files whose change the service acknowledged in this round, by name, sorted. */
  files: FileChange[];
  /** Files the service refused in this round for a stale base: each is a conflict now. */
  conflicts: { flowPath: string; path: string; writtenBy: string | null }[];
  flows: number;
  created: number;
  updated: number;
  deleted: number;
  rejected: { flowPath: string; message: string }[];
  requests: number;
  ms: number;
}

/**
 * One flow of a dry run: what a round would send of it (`send`), or why it would send nothing: the service refused
 * it as it is; or a flow root (`flowPath` is then the root) is held: absent, emptied, on another drive.
 */
export interface PlannedFlow {
  flowPath: string;
  action: 'send' | 'held' | 'refused' | 'conflict';
  /** Why a root is held, in words. */
  message: string | null;
  created: string[];
  updated: string[];
  deleted: string[];
}

/** In sync again after an outage (offline, unauthorized, or the folder missing): "Back in sync: N files sent". */
export interface SyncRecovery {
  /** Files the service created, updated or deleted from the end of the outage until in sync. */
  files: number;
}

/** Pending flows planned and sent at a time: two requests of up to 200 flows each (MAX_FLOWS_PER_BATCH). */
export const UPLOAD_PAGE = 400;

/** The non-empty plans of `flows`, UPLOAD_PAGE flows at a time, each page planned only when it is reached. */
export function* pagesOf(
  flows: readonly string[],
  plan: (page: readonly string[]) => FlowPlan[],
): Generator<FlowPlan[]> {
  for (let start = 0; start < flows.length; start += UPLOAD_PAGE) {
    const plans = plan(flows.slice(start, start + UPLOAD_PAGE));
    if (plans.length > 0) yield plans;
  }
}

export function addTally(report: SyncReport, tally: UploadTally): void {
  report.rejected.push(...tally.rejected);
  report.conflicts.push(
    ...tally.conflicts.map(({ flowPath, path, writtenBy }) => ({ flowPath, path, writtenBy })),
  );
  report.files.push(...tally.files);
  report.flows += tally.flows;
  report.created += tally.created;
  report.updated += tally.updated;
  report.deleted += tally.deleted;
  report.requests += tally.requests;
}

export function emptyReport(): SyncReport {
  return {
    files: [],
    conflicts: [],
    flows: 0,
    created: 0,
    updated: 0,
    deleted: 0,
    rejected: [],
    requests: 0,
    ms: 0,
  };
}

/**
 * The conflicts a one-shot run's look before found (the state's, but those `known` before the run and those the
 * round's answers reported), put first in its report: this run's news as much as a refusal would have been.
 */
export function withConflictsFound(
  report: SyncReport,
  conflicts: readonly { flowPath: string; path: string; writtenBy: string | null }[],
  known: ReadonlySet<string>,
): void {
  const key = (c: { flowPath: string; path: string }) => `${c.flowPath}\0${c.path}`;
  const reported = new Set(report.conflicts.map(key));
  report.conflicts.unshift(
    ...conflicts
      .filter((c) => !known.has(key(c)) && !reported.has(key(c)))
      .map(({ flowPath, path, writtenBy }) => ({ flowPath, path, writtenBy })),
  );
}
