import type { Conflict } from '../protocol/index.ts';
import type { SyncState } from './state.ts';
import type { FileConflict } from './state-records.ts';

type Found = Omit<FileConflict, 'foundAt'>;

/**
 * Conflicts found (refused writes, or the service's listing differing from what this checkout acknowledged),
 * recorded for their user and returned, except those whose service version this checkout wrote itself (the service
 * names the writer): its state lost that acknowledgement (a state rebuilt, a disk error), so the service's version
 * becomes the base and what is on disk is sent on it in the next round.
 */
export function recordConflicts(
  context: { state: SyncState; repoId: number; target: { writer?: string } },
  conflicts: readonly Found[],
): Found[] {
  const { state, repoId, target } = context;
  const own = (c: Found) =>
    target.writer !== undefined && c.writtenBy === target.writer && c.serviceHash !== null;
  for (const c of conflicts.filter(own)) state.settleConflict(repoId, c.flowPath, c.path, c.serviceHash);
  const theirs = conflicts.filter((c) => !own(c));
  state.recordConflicts(repoId, theirs);
  return theirs;
}

/** A conflict as the service reports it (a refused write), in the state's words. */
export function conflictFromService(conflict: Conflict): Found {
  return {
    flowPath: conflict.flow_path,
    path: conflict.path,
    baseHash: conflict.base_hash,
    serviceHash: conflict.service_hash,
    sentHash: conflict.sent_hash,
    writtenBy: conflict.written_by,
    writtenAt: conflict.written_at,
  };
}
