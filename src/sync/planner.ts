import { createHash } from 'node:crypto';
import { serviceFileKey } from './service-copy.ts';
import type { SyncState } from './state.ts';
import type { FileRecord } from './state-records.ts';
import { isDeletion, isKeptAsOnService } from './three-way.ts';

/** What one flow needs so that the service has what is on disk. */
export interface FlowPlan {
  flowPath: string;
  /** Files on disk whose content the service does not have yet. */
  upserts: FileRecord[];
  /** Files the service has that are gone from disk (three-way.ts's isDeletion). */
  deletes: FileRecord[];
  /** Every sendable file on disk: what a full listing with delete_missing sends. */
  present: FileRecord[];
  /** Identifies this exact content, so a flow the service refused is not sent again until it changes. */
  signature: string;
  /** Sent before without an answer: what the service holds of it is unknown. */
  uncertain: boolean;
  /**
   * Sent as a full listing with delete_missing: when files must go, and when the service may hold files the
   * state does not know of (an unanswered request), which only a full listing can remove. Never with bases.
   */
  full: boolean;
  /**
   * Each write carries its base (the hash last acknowledged, null for a file this agent believes new) and each
   * deletion is an explicit path with its base: the service refuses what changed there since (a conflict) instead
   * of overwriting it. Only for a service that takes bases.
   */
  bases: boolean;
}

export interface PlanOptions {
  /** The service takes bases: no full listing, every write and deletion on its base. */
  bases?: boolean;
  /**
   * Deletions are held (a round that would delete more than the repository's threshold, or a held set waiting for
   * its user): none is planned but those confirmed.
   */
  holdDeletions?: boolean;
  /**
   * The deletions its user confirmed (serviceFileKey: flow and path): planned even while the others are held, in
   * every round until the service took them.
   */
  confirmed?: ReadonlySet<string>;
}

/** Whether a deletion is planned: none held, or its user confirmed it. */
function deletionGoes(flowPath: string, file: FileRecord, options: PlanOptions): boolean {
  return !options.holdDeletions || options.confirmed?.has(serviceFileKey(flowPath, file.path)) === true;
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
 * With bases, flows sent without an answer were answered by the service's listing before planning (the engine's
 * answerUnanswered): their plans are those of any flow.
 */
export function planUploads(
  state: SyncState,
  repoId: number,
  flows: readonly string[] = state.pendingFlows(repoId),
  options: PlanOptions = {},
): { plans: FlowPlan[]; stillRejected: string[] } {
  const rejected = new Map(state.rejections(repoId).map((r) => [r.flowPath, r.signature]));
  const uncertain = new Set(state.uncertainFlows(repoId));
  const plans: FlowPlan[] = [];
  const stillRejected: string[] = [];
  for (const flowPath of flows) {
    if (options.bases) {
      const plan = planOnBases(state, repoId, flowPath, uncertain.has(flowPath), options);
      if (plan === null) continue;
      if (rejected.get(flowPath) === plan.signature) stillRejected.push(flowPath);
      else plans.push(plan);
      continue;
    }
    const files = state.filesOfFlow(repoId, flowPath);
    const present = files.filter(isSendable);
    const signature = flowSignature(present);
    if (rejected.get(flowPath) === signature) {
      stillRejected.push(flowPath);
      continue;
    }
    const gone = files.filter(isDeletion);
    // A file on disk but not sent (unreadable now, over 1 MiB, binary, a link…) stays on the service as it is: no
    // full listing of its flow (which would drop it) while it is so; the flow's changed files still go. With
    // deletions held, a flow that lost files not all confirmed is not listed whole either.
    const held = files.some(isKeptAsOnService) || gone.some((file) => !deletionGoes(flowPath, file, options));
    const deletes = held ? [] : gone;
    const upserts = present.filter((file) => file.localHash !== file.ackedHash);
    // Sent but not answered, with a file held: only a full listing would answer for it, so it waits whole.
    if (held && (uncertain.has(flowPath) || upserts.length === 0)) continue;
    plans.push({
      flowPath,
      upserts,
      deletes,
      present,
      signature,
      uncertain: uncertain.has(flowPath),
      full: !held && (deletes.length > 0 || uncertain.has(flowPath)),
      bases: false,
    });
  }
  return { plans, stillRejected };
}

/**
 * One flow for a service that takes bases: its changed files, each on the hash last acknowledged, and its files
 * gone from disk as explicit deletions on theirs. A file in conflict, or held as git left it, waits for its user; a file on disk but not
 * sent (unreadable now, over 1 MiB…) is neither sent nor deleted. Null when nothing is to be sent.
 */
function planOnBases(
  state: SyncState,
  repoId: number,
  flowPath: string,
  uncertain: boolean,
  options: PlanOptions,
): FlowPlan | null {
  const conflicts = state.conflictsOf(repoId, flowPath);
  // Git's motions held for their user: not sent while as git left them and not confirmed.
  const held = state.gitHeld.heldOf(repoId, flowPath);
  const files = state
    .filesOfFlow(repoId, flowPath)
    .filter((file) => !conflicts.has(file.path) && !held.has(file.path));
  const present = files.filter(isSendable);
  const upserts = present.filter((file) => file.localHash !== file.ackedHash);
  const deletes = files.filter((file) => isDeletion(file) && deletionGoes(flowPath, file, options));
  if (upserts.length === 0 && deletes.length === 0) return null;
  return {
    flowPath,
    upserts,
    deletes,
    present,
    signature: flowSignature(present),
    uncertain,
    full: false,
    bases: true,
  };
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
