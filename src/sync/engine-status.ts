import { credentialRefusal, failureKind, type CredentialRefusal } from '../client/index.ts';
import { describeStorageFault, storageFaultRemedy, type StorageFault } from '../host/index.ts';
import { changeSetWords, isTrouble, type GitChangeSetView, type SyncPhase } from '../protocol/index.ts';
import type { FileConflict } from './state-records.ts';
import type { RoundOutcome } from './scheduler.ts';

/*
 * What the engine's status says, decided in pure functions (Syncthing's folder state is the
 * model): one facts record, changed only by `withPhase` and `afterRound`, and read by `composeStatus`. The engine
 * keeps the record and emits it; the last three engine fixes were each a storage fault lost between two phase
 * changes of four fields set by hand in eleven places, and are rows of test/sync/engine-status.test.ts now.
 */

export type { SyncPhase };

export interface StatusFacts {
  phase: SyncPhase;
  message: string | null;
  /** The phase a round left, to return to after a scan while a retry is waited for. */
  resting: { phase: SyncPhase; message: string | null; fault?: StorageFault };
  /**
   * What the last failed state write said of the data folder, while it is the reason nothing moves: set with the
   * 'storage' phase, kept through a scan, cleared by any other phase.
   */
  fault: StorageFault | null;
  /** Since an outage began: the files sent after it, for "back in sync: N files sent". */
  outage: { files: number } | null;
}

export function initialFacts(paused: boolean): StatusFacts {
  const phase: SyncPhase = paused ? 'paused' : 'idle';
  return { phase, message: null, resting: { phase, message: null }, fault: null, outage: null };
}

/** The engine enters `phase` (with its message, and the storage fault that caused it, if any). */
export function withPhase(
  facts: StatusFacts,
  phase: SyncPhase,
  message: string | null,
  fault?: StorageFault,
): StatusFacts {
  return {
    ...facts,
    phase,
    message,
    fault: fault !== undefined ? fault : phase === 'storage' || phase === 'scanning' ? facts.fault : null,
    outage: isTrouble(phase) ? (facts.outage ?? { files: 0 }) : facts.outage,
  };
}

/** Files the service took while an outage is being recovered from (counted for "back in sync"). */
export function withSent(facts: StatusFacts, files: number): StatusFacts {
  return facts.outage ? { ...facts, outage: { files: facts.outage.files + files } } : facts;
}

/** A scan ended while a retry is waited for: back to what the last round said, until the retry. */
export function backToResting(facts: StatusFacts): StatusFacts {
  return facts.phase === 'scanning'
    ? withPhase(facts, facts.resting.phase, facts.resting.message, facts.resting.fault)
    : facts;
}

/** Its user paused (true) or resumed (false) the repository. */
export function withPaused(facts: StatusFacts, paused: boolean): StatusFacts {
  const resting = { phase: paused ? ('paused' as const) : ('idle' as const), message: null };
  if (paused)
    return facts.phase === 'missing'
      ? { ...facts, resting }
      : { ...withPhase(facts, 'paused', null), resting };
  return facts.phase === 'paused' ? { ...withPhase(facts, 'idle', null), resting } : { ...facts, resting };
}

/**
 * After a round: the phase it leaves, and, at the end of an outage, `recovered` with the files sent since it began
 * (null otherwise). `changed` false: the round leaves the facts as they are (the folder is missing).
 */
export function afterRound(
  facts: StatusFacts,
  outcome: RoundOutcome,
  paused: boolean,
): { facts: StatusFacts; changed: boolean; recovered: { files: number } | null } {
  if (outcome.kind === 'unreachable' || outcome.kind === 'refused') {
    const fault = outcome.phase === 'storage' ? outcome.fault : undefined;
    const next = withPhase(facts, outcome.phase, outcome.message, fault);
    return {
      facts: { ...next, resting: { phase: outcome.phase, message: outcome.message, fault } },
      changed: true,
      recovered: null,
    };
  }
  if (facts.phase === 'missing') return { facts, changed: false, recovered: null };
  if (paused)
    return {
      facts: { ...withPhase(facts, 'paused', null), resting: { phase: 'paused', message: null } },
      changed: true,
      recovered: null,
    };
  const idle = { ...withPhase(facts, 'idle', null), resting: { phase: 'idle' as const, message: null } };
  const ended = (outcome.kind === 'done' || outcome.kind === 'recheck') && facts.outage !== null;
  return {
    facts: ended ? { ...idle, outage: null } : idle,
    changed: true,
    recovered: ended ? { files: facts.outage!.files } : null,
  };
}

/** What the status shows of the facts, with what the engine knows besides (flow roots held, standing problems). */
export interface StatusView {
  phase: SyncPhase;
  message: string | null;
}

/** Whether changes the state could not record count as pending: while the storage fault that kept them lasts. */
export function countsUnrecorded(facts: StatusFacts): boolean {
  return facts.fault !== null;
}

/**
 * The phase and message shown: a flow root held (absent, emptied, another drive) is the repository missing in part,
 * whatever the round said; a storage fault says what waits and what to do; else the phase's own message, or what
 * stays wrong until its user changes it (`standing`, asked only then).
 */
export function composeStatus(
  facts: StatusFacts,
  known: {
    held: readonly string[];
    folder: string;
    pending: () => number;
    standing: () => readonly string[];
  },
): StatusView {
  const missing = known.held.length > 0 && (facts.phase === 'idle' || facts.phase === 'syncing');
  const message =
    facts.phase === 'storage' && facts.fault
      ? storageMessage(facts.fault, known.folder, known.pending())
      : ((missing ? known.held.join('; ') : facts.message) ?? (known.standing().join('; ') || null));
  return { phase: missing ? 'missing' : facts.phase, message };
}

export function storageMessage(fault: StorageFault, folder: string, waiting: number): string {
  return (
    `${describeStorageFault(fault, folder)}: ${waiting} ${waiting === 1 ? 'change' : 'changes'} waiting; ` +
    `${storageFaultRemedy(fault)}, and syncing goes on by itself`
  );
}

/** "2 files in conflict with the service's version: `flowsync conflicts` shows them" */
export function conflictLine(count: number): string {
  return (
    `${count} ${count === 1 ? 'file is' : 'files are'} in conflict with the service's version (changed there since ` +
    'this checkout last synced it): `flowsync conflicts` shows them, `flowsync resolve` settles them'
  );
}

/** A read-only member's edits: kept here, never sent; the way out is a role, not a retry. */
export function readOnlyLine(count: number): string {
  return (
    `${count} ${count === 1 ? 'file' : 'files'} changed here, not sent: you are a read-only member of this service ` +
    '(an operator can give you write access)'
  );
}

/** Files on the service that this checkout does not have: kept there, never deleted by a round. */
export function notInCheckoutLine(count: number): string {
  const one = count === 1;
  return (
    `${count} ${one ? 'file' : 'files'} on the service ${one ? 'is' : 'are'} not in this checkout (kept there, ` +
    'not deleted): `flowsync resolve --not-in-checkout` lists them'
  );
}

/**
 * "2 files newer on the service, by bob@laptop:~/app: `flowsync resolve --newer` takes them (nothing here changes)":
 * a teammate's edits of files untouched here (three-way.ts's 'behind'), which is no conflict; null when none.
 */
export function behindLine(behind: readonly { writtenBy: string | null }[], root?: string): string | null {
  if (behind.length === 0) return null;
  const writers = [...new Set(behind.map((file) => file.writtenBy).filter((by) => by !== null))].sort();
  const by =
    writers.length === 0
      ? ''
      : `, by ${writers.slice(0, 3).join(', ')}${writers.length > 3 ? ` and ${writers.length - 3} more` : ''}`;
  return (
    `${behind.length} ${behind.length === 1 ? 'file' : 'files'} newer on the service${by}: ` +
    `\`flowsync resolve --newer${root === undefined ? '' : ` ${root}`}\` takes them (nothing changed here is touched)`
  );
}

/** A conflict whose base the service lost: what it holds is older, and this checkout's may be the only copy. */
export function lostMessage(conflict: { serviceHash: string | null }): string {
  return (
    `the service no longer has the version this checkout synced (it ${conflict.serviceHash === null ? 'has no such file' : 'holds an older one'}): ` +
    "this checkout's may be the only copy; `--mine` sends it again"
  );
}

/**
 * "the service went back in time: 16 versions this checkout synced are gone from it (…)": said once in the status
 * while any conflict is of that kind (null otherwise); the one action it names sends them again, never deletes.
 */
export function wentBackLine(lost: number): string | null {
  if (lost === 0) return null;
  return (
    `the service went back in time (restored from an older backup, or another database at its address?): ` +
    `${lost} ${lost === 1 ? 'version' : 'versions'} this checkout synced ${lost === 1 ? 'is' : 'are'} gone from it; nothing here was changed, ` +
    '`flowsync resolve . --mine` sends them again'
  );
}

/** "159 deletions held: …" */
export function heldLine(count: number): string {
  return (
    `${count} ${count === 1 ? 'deletion' : 'deletions'} held, more than this repository deletes without asking: ` +
    '`flowsync sync --yes` deletes them on the service, `flowsync resolve --held --theirs` puts them back on disk'
  );
}

/**
 * `branch cleanup: 1 changed, 6 deleted, waiting for you: …`: git's change set held on a shared service,
 * with the teammates whose work it would change and the two ways out.
 */
export function gitChangesLine(set: GitChangeSetView, teammates: readonly string[]): string {
  const team = teammates.length > 0 ? ` (${teammates.join(', ')})` : '';
  return (
    `${changeSetWords(set)}, waiting for you: git's changes are not sent to the team${team} until you say so: ` +
    '`flowsync sync --yes` sends them, `flowsync sync --keep` keeps them here'
  );
}

/** "changed on the service by bob@laptop:~/app at 2026-…" */
export function conflictMessage(conflict: FileConflict): string {
  const by = conflict.writtenBy ? ` by ${conflict.writtenBy}` : '';
  const at = conflict.writtenAt ? ` at ${conflict.writtenAt}` : '';
  if (conflict.lost === true) return lostMessage(conflict);
  const what = conflict.serviceHash === null ? 'deleted on the service' : 'changed on the service';
  return `${what}${by}${at} since this checkout last synced it`;
}

/**
 * No answer: probe until there is one. An answer that is not a success: back off. What the answer means is the
 * client's one reading of it (`failureKind`), not a second reading of status codes here.
 */
export function failureOutcome(error: unknown, message: string, service = 'the service'): RoundOutcome {
  const kind = failureKind(error);
  if (kind === 'unreachable') return { kind: 'unreachable', phase: 'offline', message };
  // A member's token that is over: signed out, its one line, and a call a minute at most; never a retry.
  const over = credentialRefusal(error);
  if (over)
    return { kind: 'refused', phase: 'unauthorized', message: signedOutLine(service, over), signedOut: true };
  return { kind: 'refused', phase: kind === 'unauthorized' ? 'unauthorized' : 'unavailable', message };
}

/**
 * The one line a member's agent says when the service no longer takes its token: the service's reason (removed,
 * revoked, expired, with when), that nothing is lost, and what to do. Said once: the status keeps it while it lasts.
 */
export function signedOutLine(service: string, over: CredentialRefusal): string {
  const when = over.at === null ? '' : ` at ${over.at}`;
  const why = {
    removed: `you were removed from this service${when}`,
    revoked: `your token was revoked${when}`,
    expired: `your token expired${when}`,
  }[over.credential];
  return (
    `${service} no longer takes your token: ${why}. Nothing is sent, and your edits wait here: ask an operator for a new ` +
    `invite, then \`flowsync login --url ${service} --invite\`.`
  );
}

/**
 * Whether a probe that failed still got an answer, by the same reading as a round's (`failureKind`). The probe
 * asked "not a TransportError" instead, so a 408 (a gateway whose upstream did not answer in time, 'unreachable'
 * to the client) counted as an answer: every probe then started a full round of uploads, which met the 408 again,
 * every 2-4 s for as long as it lasted, where the probe alone was meant to knock.
 */
export function probeAnswered(error: unknown): boolean {
  return failureKind(error) !== 'unreachable';
}

/**
 * How a round that sent all it could ends: 'recheck' while files are unreadable, flows wait out their own back-off
 * or deletions wait for their count to stand still (the next look when the first is due), which never holds back a
 * round that a change asks for. `retryInMs`: when the first flow's own back-off ends (null: none waits);
 * `waitingMs`: 0 when no deletions wait so.
 */
export function restingOutcome(due: {
  retryInMs: number | null;
  waitingMs: number;
  unreadable: boolean;
}): RoundOutcome {
  const waitInMs = due.waitingMs > 0 ? due.waitingMs : null;
  const { retryInMs } = due;
  const dueInMs =
    retryInMs === null ? waitInMs : waitInMs === null ? retryInMs : Math.min(retryInMs, waitInMs);
  if (dueInMs !== null) return { kind: 'recheck', afterMs: dueInMs };
  return due.unreadable ? { kind: 'recheck' } : { kind: 'done' };
}
