import { setTimeout as sleep } from 'node:timers/promises';

/**
 * "In sync" is said only after a fresh look at the service: Ctrl-C one second after a teammate's edit
 * said "everything was in sync", and `flowsync status` exited 0, until the next look every 45 s. What asks (status,
 * the stop line of `start`) calls the engine's lookNow(); whether it then looks is needsFreshLook's one decision.
 */
export interface LastLook {
  /** When the last look at the service that went through asked it (ms since the epoch); null: none yet. */
  at: number | null;
  /** The service's live feed is connected and has said everything up to now: a look would learn nothing more. */
  live: boolean;
}

/** A look at most this old is fresh: two `status` in a row (or `status` and the stop line) ask the service once. */
export const FRESH_LOOK_MS = 1000;

/** How long `status` waits for a look before it says the service could not be reached now. */
export const LOOK_WAIT_MS = 5000;

/** Whether a look at the service is made before "in sync" is said on the last one. */
export function needsFreshLook(last: LastLook, now: number): boolean {
  if (last.live) return false;
  if (last.at === null) return true;
  const age = now - last.at;
  // A look "in the future" is a clock that went back: not trusted.
  return age < 0 || age > FRESH_LOOK_MS;
}

/** What lookNow() answers: the last look after it, and whether the service was seen now. */
export interface FreshLook extends LastLook {
  /** The service was seen now: a look that went through, one fresh enough, or the live feed current. */
  fresh: boolean;
  /**
   * Why the look asked now did not go through (the error it met, or no answer within the wait); null when it did,
   * or when none was made (paused, offline, stopped: what they say is not "in sync" either).
   */
  failure: string | null;
}

/** A repository's look as it is said to a reader (status, the window's lookNow): its time as ISO. */
export interface LookSaid {
  root: string;
  at: string | null;
  live: boolean;
  fresh: boolean;
  failure: string | null;
}

export function lookView(root: string, look: FreshLook): LookSaid {
  const { at, live, fresh, failure } = look;
  return { root, at: at === null ? null : new Date(at).toISOString(), live, fresh, failure };
}

/** Said when none was made: the repository's phase says why. */
export function notLooked(last: LastLook): FreshLook {
  return { ...last, fresh: false, failure: null };
}

/**
 * The looks asked of one engine: one at a time, shared by whoever asks while it runs, each waited for at most
 * `waitMs` (the look goes on after that, and what it finds is recorded and said then).
 */
export class FreshLooks {
  private inFlight: Promise<string | null> | null = null;

  constructor(
    private readonly port: {
      last(): LastLook;
      /** The quick check of the service; `round`: a round may follow it (not for an engine opened for one command). */
      look(round: boolean): Promise<unknown>;
    },
  ) {}

  async now({
    waitMs = LOOK_WAIT_MS,
    round = true,
  }: { waitMs?: number; round?: boolean } = {}): Promise<FreshLook> {
    if (!needsFreshLook(this.port.last(), Date.now()))
      return { ...this.port.last(), fresh: true, failure: null };
    this.inFlight ??= this.port
      .look(round)
      .then(
        () => null,
        (error: unknown) => (error instanceof Error ? error.message : String(error)),
      )
      .finally(() => (this.inFlight = null));
    const noAnswer = `no answer within ${Math.round(waitMs / 1000)} s`;
    // Not kept alive by the wait: a command that has its answer ends.
    const failure = await Promise.race([this.inFlight, sleep(waitMs, noAnswer, { ref: false })]);
    return { ...this.port.last(), fresh: failure === null, failure };
  }
}
