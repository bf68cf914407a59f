import { z } from 'zod';

/**
 * What a repository's sync is doing, written once: the engine sets it, the window's contract carries it, the tray,
 * the terminal and the notifications read it.
 * - `offline`: the service does not answer at all (refused, reset, timed out, a 408): probed every few seconds.
 * - `unavailable`: the service answers but cannot take the round (a 5xx, a 429, an answer flowsync refuses): backed
 *   off. It said "offline" before, which sent users looking at their network when the service was the one failing.
 * - `unauthorized`: the service refused the token (401, 403): waits for its user.
 * - `storage`: the state could not be written (the data folder full, read-only…); changes wait in memory meanwhile.
 * - `paused`: its user paused the repository; changes are still watched and counted as pending, and nothing is sent.
 * - `elsewhere`: another checkout of the same repository is its source: this one is not synced (not paused: resuming
 *   it does nothing; `--source` makes it the source). It showed as `paused` before.
 */
export const SYNC_PHASES = [
  'scanning',
  'syncing',
  'idle',
  'offline',
  'unavailable',
  'unauthorized',
  'missing',
  'storage',
  'stopped',
  'paused',
  'elsewhere',
] as const;

export const syncPhaseSchema = z.enum(SYNC_PHASES);
export type SyncPhase = z.infer<typeof syncPhaseSchema>;

/**
 * The phases during which nothing reaches the service for a reason its user may have to act on (an outage): the
 * tray's trouble, the engine's "back in sync" count, the terminal's "retrying" line. It was written in six lists.
 */
export const TROUBLE_PHASES: readonly SyncPhase[] = [
  'offline',
  'unavailable',
  'unauthorized',
  'missing',
  'storage',
];

export function isTrouble(phase: SyncPhase): boolean {
  return TROUBLE_PHASES.includes(phase);
}

/** The service could not be asked (no answer, or an answer that says "not now"): what waits is not known. */
export function serviceAway(phase: SyncPhase): phase is 'offline' | 'unavailable' {
  return phase === 'offline' || phase === 'unavailable';
}
