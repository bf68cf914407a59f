import type { Conflict } from '../protocol/index.ts';
import { isOwnVersion } from './reconcile.ts';
import type { SyncState } from './state.ts';
import type { FileConflict } from './state-records.ts';

type Found = Omit<FileConflict, 'foundAt'>;

/**
 * Conflicts found (refused writes, a teammate's deletion before the first round), recorded for their user and
 * returned, except those whose service version is this checkout's own (reconcile.ts's isOwnVersion: its writer id
 * and the bytes it sent): its state lost that acknowledgement, so the service's version becomes the base.
 */
export function recordConflicts(
  context: { state: SyncState; repoId: number; target: { writer?: string } },
  conflicts: readonly Found[],
): Found[] {
  const { state, repoId, target } = context;
  const own = (c: Found) =>
    c.serviceHash !== null &&
    isOwnVersion(
      { hash: c.serviceHash, writtenBy: c.writtenBy },
      { path: c.path, base: c.baseHash, disk: c.sentHash },
      { writer: target.writer },
    );
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
