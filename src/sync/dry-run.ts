import { conflictMessage, heldLine } from './engine-status.ts';
import { planUploads, type PlanOptions } from './planner.ts';
import type { PlannedFlow } from './round-report.ts';
import type { RootGuard } from './root-guard.ts';
import type { SyncState } from './state.ts';

/** What a dry run looks at: the state after its rescan, the roots held, how the round would plan. */
export interface DryRunFacts {
  state: SyncState;
  repoId: number;
  guard: RootGuard;
  options: PlanOptions;
  /** Deletions the guard holds for their user. */
  heldDeletions: number;
}

/**
 * What a round would send now, flow by flow, with the same planner a round uses, and what is held back and why
 * (`flowsync sync --dry-run`). Reads the state, writes nothing.
 */
export function dryRun({ state, repoId, guard, options, heldDeletions }: DryRunFacts): PlannedFlow[] {
  const pending = state.pendingFlows(repoId);
  const { plans, stillRejected } = planUploads(
    state,
    repoId,
    pending.filter((flow) => !guard.holds(flow)),
    options,
  );
  const planned: PlannedFlow[] = plans.map((plan) => ({
    flowPath: plan.flowPath,
    action: 'send',
    message: null,
    created: plan.upserts.filter((file) => file.ackedHash === null).map((file) => file.path),
    updated: plan.upserts.filter((file) => file.ackedHash !== null).map((file) => file.path),
    deleted: plan.deletes.map((file) => file.path),
  }));
  const none = { created: [], updated: [], deleted: [] };
  // A held root sends nothing of its flows, and what the rescan did not find under it is not taken as gone.
  for (const [root, message] of guard.held)
    planned.push({ flowPath: root, action: 'held', message, ...none });
  for (const flowPath of stillRejected) planned.push({ flowPath, action: 'refused', message: null, ...none });
  for (const conflict of state.conflicts(repoId))
    planned.push({
      flowPath: `${conflict.flowPath}/${conflict.path}`,
      action: 'conflict',
      message: conflictMessage(conflict),
      ...none,
    });
  if (heldDeletions > 0)
    planned.push({ flowPath: '', action: 'held', message: heldLine(heldDeletions), ...none });
  return planned.sort((a, b) => a.flowPath.localeCompare(b.flowPath));
}
