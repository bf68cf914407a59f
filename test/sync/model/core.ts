import { needsOf, type WaitingFacts } from '../../../src/protocol/index.ts';
import { isNotInCheckout, isOwnVersion, reconcileFlow } from '../../../src/sync/reconcile.ts';
import { deletionVerdict } from '../../../src/sync/safety.ts';
import { fileSide, isDeletion, wantedOnService, wentBackInTime } from '../../../src/sync/three-way.ts';

/*
 * The decisions the model of the team asks, passed in as one record so that a test can run the model against a
 * deliberately broken one (broken-cores.ts) without changing src. `realCore` is flowsync's own pure core; the two
 * rules below it (the planner's and "in sync") are the model's copies of rules that src does not yet hold as pure
 * functions, each written once here so that it is switched to src's in one place when it lands.
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
  planFlow: (files: readonly PlannedFile[], options: { holdDeletions: boolean }) => FlowRequest | null;
  /** After a round: whether the deletions its user allowed stay allowed (the engine resets them after each round). */
  keepsAllowance: (round: { holdDeletions: boolean; refused: boolean }) => boolean;
}

/**
 * The model's copy of the planner's rule for a service that takes bases (src/sync/planner.ts planOnBases, which
 * reads the SQLite state): the flow's files not recorded, those changed here sent on their base, those gone
 * from disk deleted on theirs unless deletions are held. Null when nothing is to be sent.
 */
export function planFlow(
  files: readonly PlannedFile[],
  options: { holdDeletions: boolean },
  core: Pick<Core, 'wantedOnService' | 'isDeletion'> = realCore,
): FlowRequest | null {
  const writes: FlowRequest['writes'] = [];
  const deletes: FlowRequest['deletes'] = [];
  for (const file of files) {
    if (file.recorded) continue;
    const sides = { localHash: file.localHash, warning: null, ackedHash: file.ackedHash };
    if (core.isDeletion(sides)) {
      if (!options.holdDeletions) deletes.push({ path: file.path, base: file.ackedHash! });
      continue;
    }
    const wanted = core.wantedOnService(sides);
    if (wanted !== null && wanted !== file.ackedHash)
      writes.push({ path: file.path, hash: wanted, base: file.ackedHash });
  }
  return writes.length + deletes.length === 0 ? null : { writes, deletes };
}

/**
 * The model's copy of "in sync" as `start`'s summary and `status` decide it today (src/cli/commands/start.ts
 * summary; issue 45 puts it beside needsOf in src/protocol): nothing pending, nothing waiting for its user, not
 * paused, nothing newer on the service. It does not read whether an agent runs: issue 45's failure 5.
 */
export function saysInSync(facts: InSyncFacts, core: Pick<Core, 'needsOf'> = realCore): boolean {
  return (
    facts.counts.pending === 0 &&
    core.needsOf(facts).length === 0 &&
    !facts.paused &&
    facts.counts.behind === 0
  );
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
  // src/sync/engine.ts: "Deletions allowed go once" — reset after any round that did not hold them, refused or not.
  keepsAllowance: ({ holdDeletions }) => holdDeletions,
};
