import { createHash } from 'node:crypto';
import type { FileRecord, SyncState } from './state.ts';

/** What one flow needs so that the service has what is on disk. */
export interface FlowPlan {
  flowPath: string;
  /** Files on disk whose content the service does not have yet. */
  upserts: FileRecord[];
  /** Files the service has that are gone from disk (or are no longer sendable). */
  deletes: FileRecord[];
  /** Every sendable file on disk: what a full listing with delete_missing sends. */
  present: FileRecord[];
  /** Identifies this exact content, so a flow the service refused is not sent again until it changes. */
  signature: string;
  /** Sent before without an answer: what the service holds of it is unknown. */
  uncertain: boolean;
  /**
   * Sent as a full listing with delete_missing: when files must go, and when the service may hold files the
   * state does not know of (an unanswered request), which only a full listing can remove.
   */
  full: boolean;
}

function isSendable(file: FileRecord): boolean {
  return file.localHash !== null && file.warning === null;
}

export function flowSignature(present: readonly FileRecord[]): string {
  const hash = createHash('sha256');
  for (const file of present) hash.update(`${file.path}\0${file.localHash}\n`);
  return hash.digest('hex');
}

/**
 * Flows whose files differ from what the service acknowledged, minus those refused as they are now. `flows`
 * narrows it to some of the pending flows (a page: the engine plans and sends a few hundred flows at a time).
 */
export function planUploads(
  state: SyncState,
  repoId: number,
  flows: readonly string[] = state.pendingFlows(repoId),
): { plans: FlowPlan[]; stillRejected: string[] } {
  const rejected = new Map(state.rejections(repoId).map((r) => [r.flowPath, r.signature]));
  const uncertain = new Set(state.uncertainFlows(repoId));
  const plans: FlowPlan[] = [];
  const stillRejected: string[] = [];
  for (const flowPath of flows) {
    const files = state.filesOfFlow(repoId, flowPath);
    const present = files.filter(isSendable);
    const signature = flowSignature(present);
    if (rejected.get(flowPath) === signature) {
      stillRejected.push(flowPath);
      continue;
    }
    // A file that could not be read now stays on the service as it is: no full listing of its flow (which would
    // drop it) until it is read again; the flow's changed files still go. The round's back-off reads it again.
    const held = files.some((file) => file.warning === 'unreadable' && file.ackedHash !== null);
    const deletes = held ? [] : files.filter((file) => !isSendable(file) && file.ackedHash !== null);
    const upserts = present.filter((file) => file.localHash !== file.ackedHash);
    // Sent but not answered, with a file held: only a full listing would settle it, so it waits whole.
    if (held && (uncertain.has(flowPath) || upserts.length === 0)) continue;
    plans.push({
      flowPath,
      upserts,
      deletes,
      present,
      signature,
      uncertain: uncertain.has(flowPath),
      full: !held && (deletes.length > 0 || uncertain.has(flowPath)),
    });
  }
  return { plans, stillRejected };
}

/**
 * Names what a set of plans would do, against what the service acknowledged: the same key before and after a
 * round means the round changed nothing, and sending again at once would loop.
 */
export function plansKey(plans: readonly FlowPlan[]): string {
  const hash = createHash('sha256');
  for (const plan of plans) {
    hash.update(`${plan.flowPath}\0${plan.signature}\0${plan.full}\n`);
    for (const file of [...plan.upserts, ...plan.deletes])
      hash.update(`${file.path}\0${file.localHash}\0${file.ackedHash}\0${file.fileId}\n`);
  }
  return hash.digest('hex');
}
