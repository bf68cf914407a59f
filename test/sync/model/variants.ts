import type { Difference } from '../../../src/sync/reconcile.ts';
import { realCore, saysInSync, type Core } from './core.ts';

/*
 * Cores the model runs besides flowsync's own. `sketchedFixes` is src's core with the fixes of issue 45's
 * failures 3, 4 and 5 sketched in the model (1 is fixed in src), so that the model looks past them before they land (a violation
 * it still finds is news). The known-bad ones are that core with one rule broken on purpose, and a test asserts the
 * model catches each with a shrunk history: the model can fail.
 */

type DeletionFacts = Parameters<Core['deletionVerdict']>[0] & { stillHeld?: number };

/** src's core with the fixes of failures 3, 4 and 5 sketched (each one line: what the fix is to do). */
export const sketchedFixes: Core = {
  ...realCore,
  // 3: the held set stays held until confirmed or put back, whatever this round counts.
  deletionVerdict: (facts: DeletionFacts) => {
    const decided = realCore.deletionVerdict(facts);
    const stillHeld = facts.stillHeld ?? 0;
    if (decided.verdict === 'send' && stillHeld > 0 && facts.allowed < facts.waiting)
      return { verdict: 'hold', held: facts.waiting, seen: facts.seen };
    return decided;
  },
  // 4: deletions its user confirmed stay confirmed when the service refused their flow.
  keepsAllowance: ({ holdDeletions, refused }) => holdDeletions || refused,
  // 5: with no agent running, nothing says in sync.
  saysInSync: (facts) => facts.running && saysInSync(facts),
};

/** Behind read as in sync: "in sync" said while a teammate's version waits. */
export const behindAsInSync: Core = {
  ...sketchedFixes,
  saysInSync: (facts) => sketchedFixes.saysInSync({ ...facts, counts: { ...facts.counts, behind: 0 } }),
};

/** A deletion not held: the guard lets every round's deletions go. */
export const deletionNotHeld: Core = {
  ...sketchedFixes,
  deletionVerdict: (facts) => ({ verdict: 'send', seen: facts.seen }),
};

/**
 * An own-version check that trusts the writer label alone (conflicts.ts's rule before reconcile.ts): two
 * checkouts sharing a label take each other's edits for their own lost acknowledgements.
 */
export const ownByLabelAlone: Core = {
  ...sketchedFixes,
  isOwnVersion: (version, _file, me) => me.writer !== undefined && version.writtenBy === me.writer,
  reconcileFlow: (facts) => {
    const plan = sketchedFixes.reconcileFlow(facts);
    const own = (d: Difference) =>
      !d.lost && d.serviceHash !== null && facts.me.writer !== undefined && d.writtenBy === facts.me.writer;
    for (const d of plan.record.filter(own))
      plan.adopt.push({ path: d.path, hash: d.serviceHash!, why: 'own' });
    plan.record = plan.record.filter((d) => !own(d));
    return plan;
  },
};

/**
 * wentBackInTime reading a conflict copy as the newest version (issue 45's failure 1, src's rule at 98fdfd9, kept
 * here as it was so that it stays a known-bad variant once src is fixed).
 */
export const copyReadAsNewest: Core = {
  ...sketchedFixes,
  wentBackInTime: (samples) =>
    samples.some(
      (sample) =>
        (sample.base !== null && !sample.versions.some((version) => version.hash === sample.base)) ||
        (sample.versions[0]?.hash ?? null) !== sample.service,
    ),
};
