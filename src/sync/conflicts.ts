import type { Conflict, MemberRef } from '../protocol/index.ts';
import { reconcileFlow, writerShown, type Me } from './reconcile.ts';
import type { SyncState } from './state.ts';
import type { FileConflict } from './state-records.ts';

type Found = Omit<FileConflict, 'foundAt'>;
/** A refused write as the service said it: with the member whose credential wrote its version. */
type Refused = Found & { member?: MemberRef | null };

/**
 * Writes the service refused for a stale base, carried out by reconcile.ts's plan (each refusal one file of its
 * flow: its base, the bytes sent, the service's version): recorded for their user and returned, except a version
 * that is this checkout's own (a lost acknowledgement, with evidence: isOwnVersion), which becomes its base.
 */
export function recordConflicts(
  context: { state: SyncState; repoId: number; target: { writer?: string }; me?: Me },
  conflicts: readonly Refused[],
): Found[] {
  const { state, repoId, target } = context;
  const recorded: Found[] = [];
  for (const { member, ...c } of conflicts) {
    const plan = reconcileFlow({
      flowPath: c.flowPath,
      files: [{ path: c.path, base: c.baseHash, disk: c.sentHash, sent: c.sentHash }],
      listed:
        c.serviceHash === null
          ? []
          : [
              {
                path: c.path,
                hash: c.serviceHash,
                writtenBy: c.writtenBy,
                writtenAt: c.writtenAt,
                ...(member === undefined ? {} : { member }),
              },
            ],
      me: context.me ?? { writer: target.writer },
    });
    for (const own of plan.adopt) state.settleConflict(repoId, c.flowPath, c.path, own.hash);
    // The service's own words for what it refused (who, when) are kept as it said them, its member first.
    if (plan.adopt.length === 0)
      recorded.push({ ...c, writtenBy: writerShown({ writtenBy: c.writtenBy, member }) });
  }
  state.recordConflicts(repoId, recorded);
  return recorded;
}

/** A conflict as the service reports it (a refused write), in the state's words. */
export function conflictFromService(conflict: Conflict): Refused {
  return {
    ...(conflict.member === undefined ? {} : { member: conflict.member }),
    flowPath: conflict.flow_path,
    path: conflict.path,
    baseHash: conflict.base_hash,
    serviceHash: conflict.service_hash,
    sentHash: conflict.sent_hash,
    writtenBy: conflict.written_by,
    writtenAt: conflict.written_at,
  };
}
