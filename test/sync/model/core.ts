import { inSyncOf, needsOf, type WaitingFacts } from '../../../src/protocol/index.ts';
import { isNotInCheckout, isOwnVersion, reconcileFlow } from '../../../src/sync/reconcile.ts';
import { deletionVerdict } from '../../../src/sync/safety.ts';
import { gitMotionOf } from '../../../src/sync/git-motion.ts';
import { fileSide, isDeletion, wantedOnService, wentBackInTime } from '../../../src/sync/three-way.ts';

/*
 * The decisions the model of the team asks, passed in as one record so that a test can run the model against a
 * deliberately broken one (variants.ts) without changing src. `realCore` is flowsync's own pure core; the planner's
 * rule below is the model's copy of one that src holds in SQL (planner.ts reads the state), written once here.
 */

/** What "in sync" reads of a checkout: the counts its status shows, and whether its agent runs. */
export interface InSyncFacts extends WaitingFacts {
  counts: { conflicts: number; pending: number; behind: number };
  paused: boolean;
  /** Whether an agent runs for it: without one, the counts are the state's as last scanned, not the disk's. */
  running: boolean;
}

/** One file of a flow as the planner reads the state: the disk as last scanned, the base, and its recorded row. */
export interface PlannedFile {
  path: string;
  localHash: string | null;
  ackedHash: string | null;
  /** A recorded difference (behind or conflict) waits for its user: the file is not sent. */
  recorded: boolean;
  /** Held as git left it (issue 46): not sent until its user says so. */
  heldByGit?: boolean;
}

/** What one flow's request carries: writes and deletions, each on its base. */
export interface FlowRequest {
  writes: { path: string; hash: string; base: string | null }[];
  deletes: { path: string; base: string }[];
}

export interface Core {
  reconcileFlow: typeof reconcileFlow;
  isOwnVersion: typeof isOwnVersion;
  isNotInCheckout: typeof isNotInCheckout;
  fileSide: typeof fileSide;
  wantedOnService: typeof wantedOnService;
  isDeletion: typeof isDeletion;
  wentBackInTime: typeof wentBackInTime;
  deletionVerdict: typeof deletionVerdict;
  needsOf: typeof needsOf;
  saysInSync: (facts: InSyncFacts) => boolean;
  planFlow: (files: readonly PlannedFile[], options: PlanFlowOptions) => FlowRequest | null;
  gitMotionOf: typeof gitMotionOf;
}

/** Deletions held this round (only those its user confirmed go), and those its user confirmed. */
export interface PlanFlowOptions {
  holdDeletions: boolean;
  confirmed: ReadonlySet<string>;
}

/**
 * The model's copy of the planner's rule for a service that takes bases (src/sync/planner.ts planOnBases, which
 * reads the SQLite state): the flow's files not recorded, those changed here sent on their base, those gone
 * from disk deleted on theirs unless deletions are held. Null when nothing is to be sent.
 */
export function planFlow(
  files: readonly PlannedFile[],
  options: PlanFlowOptions,
  core: Pick<Core, 'wantedOnService' | 'isDeletion'> = realCore,
): FlowRequest | null {
  const writes: FlowRequest['writes'] = [];
  const deletes: FlowRequest['deletes'] = [];
  for (const file of files) {
    if (file.recorded || file.heldByGit === true) continue;
    const sides = { localHash: file.localHash, warning: null, ackedHash: file.ackedHash };
    if (core.isDeletion(sides)) {
      if (!options.holdDeletions || options.confirmed.has(file.path))
        deletes.push({ path: file.path, base: file.ackedHash! });
      continue;
    }
    const wanted = core.wantedOnService(sides);
    if (wanted !== null && wanted !== file.ackedHash)
      writes.push({ path: file.path, hash: wanted, base: file.ackedHash });
  }
  return writes.length + deletes.length === 0 ? null : { writes, deletes };
}

/**
 * "In sync" as src decides it for every surface (src/protocol/in-sync.ts's inSyncOf): a checkout whose agent runs
 * is idle, one whose agent does not is not watched (the counts are the state's, not the disk's).
 */
export function saysInSync(facts: InSyncFacts): boolean {
  return inSyncOf({ ...facts, phase: facts.running ? 'idle' : null }).inSync;
}

export const realCore: Core = {
  reconcileFlow,
  isOwnVersion,
  isNotInCheckout,
  fileSide,
  wantedOnService,
  isDeletion,
  wentBackInTime,
  deletionVerdict,
  needsOf,
  saysInSync: (facts) => saysInSync(facts),
  planFlow: (files, options) => planFlow(files, options),
  gitMotionOf,
};
