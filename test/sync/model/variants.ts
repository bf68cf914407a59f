import type { Difference } from '../../../src/sync/reconcile.ts';
import { realCore, saysInSync, type Core } from './core.ts';

/*
 * Known-bad cores: flowsync's own (realCore) with one rule broken on purpose. A test asserts the model catches each
 * with a shrunk history: the model can fail. The rules of issue 45's failures are kept here as they were, so that
 * each stays a known-bad variant once src is fixed.
 */

/** Behind read as in sync: "in sync" said while a teammate's version waits. */
export const behindAsInSync: Core = {
  ...realCore,
  saysInSync: (facts) => saysInSync({ ...facts, counts: { ...facts.counts, behind: 0 } }),
};

/** A deletion not held: the guard lets every round's deletions go. */
export const deletionNotHeld: Core = {
  ...realCore,
  deletionVerdict: (facts) => ({ verdict: 'send', seen: facts.seen }),
};

/**
 * An own-version check that trusts the writer label alone (conflicts.ts's rule before reconcile.ts): two
 * checkouts sharing a label take each other's edits for their own lost acknowledgements.
 */
export const ownByLabelAlone: Core = {
  ...realCore,
  isOwnVersion: (version, _file, me) => me.writer !== undefined && version.writtenBy === me.writer,
  reconcileFlow: (facts) => {
    const plan = realCore.reconcileFlow(facts);
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
  ...realCore,
  wentBackInTime: (samples) =>
    samples.some(
      (sample) =>
        (sample.base !== null && !sample.versions.some((version) => version.hash === sample.base)) ||
        (sample.versions[0]?.hash ?? null) !== sample.service,
    ),
};

/** Failure 3's rule: the guard counts each round's deletions, not the held set (a partial undo released the rest). */
export const heldSetForgotten: Core = {
  ...realCore,
  deletionVerdict: (facts) => realCore.deletionVerdict({ ...facts, held: 0 }),
};

/** Failure 5's rule: "in sync" read from the state's counts whether an agent runs or not. */
export const inSyncWithNoAgent: Core = {
  ...realCore,
  saysInSync: (facts) => saysInSync({ ...facts, running: true }),
};

/** Git's motions read as a person's edits (issue 46 before): `git checkout -- .` sends a revert of a teammate's work. */
export const gitMotionsAsEdits: Core = {
  ...realCore,
  gitMotionOf: () => ({ kind: 'edit' }),
};
