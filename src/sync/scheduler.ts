import { SIGNED_OUT_RECHECK_MS, backoffDelay } from '../client/index.ts';
import type { StorageFault } from '../host/index.ts';

/** How a round of uploads ended, which decides when the next one runs. */
export type RoundOutcome =
  /** Nothing left to send (or only what the service refused as it is): wait for a change. */
  | { kind: 'done' }
  /** Something was sent and more is pending (ids that went stale, say): another round at once. */
  | { kind: 'progress' }
  /** Something is pending but the round changed nothing: sending again at once would loop, so back off. */
  | { kind: 'stalled' }
  /**
   * All that could be sent was, but files could not be read now (EACCES, EMFILE…): look again after the back-off,
   * which grows while they stay unreadable; or flows wait out a back-off of their own, due in `afterMs`. Unlike
   * the others, this wait does not hold back a round that a change asks for: one unreadable file or one failing
   * flow must not delay every edit by up to a minute.
   */
  | { kind: 'recheck'; afterMs?: number }
  /** No answer (connection refused, reset, timed out): probe cheaply every few seconds until there is one. */
  | { kind: 'unreachable'; phase: 'offline'; message: string }
  /**
   * An answer that says "not now" (5xx, 429) or "not you" (401, 403): back off. `signedOut`: the member's token is
   * over (removed, revoked, expired): a call a minute, to notice a new sign-in, never a back-off that starts at 1 s.
   */
  | { kind: 'refused'; phase: 'unavailable' | 'unauthorized'; message: string; signedOut?: boolean }
  /** The state could not be written (`fault` says why: full, read-only…): back off, the work stays. */
  | { kind: 'refused'; phase: 'storage'; message: string; fault: StorageFault };

export interface SchedulerTimings {
  /** Back-off after an answer that says "not now": doubled per failure from this, at most `retryMaxMs`. */
  retryBaseMs: number;
  retryMaxMs: number;
  /** While the service does not answer, a probe every `probeMinMs`–`probeMaxMs` (jittered). */
  probeMinMs: number;
  probeMaxMs: number;
  /**
   * A round wanted this long runs before the next piece of local work, so that a storm of writes (a burst handed
   * over every 500 ms, each queued ahead of the round) cannot hold every upload back until the writes stop.
   */
  roundMaxDelayMs?: number;
}

/**
 * A probe at most every 4 s while offline: the agent notices the service within 4 s of it answering again, and
 * has a second left to send what is pending within the 5 s users expect of a sync tool. The jitter spreads the
 * probes of many agents after a shared outage.
 */
export const DEFAULT_TIMINGS: SchedulerTimings = {
  retryBaseMs: 1000,
  retryMaxMs: 60_000,
  probeMinMs: 2000,
  probeMaxMs: 4000,
  roundMaxDelayMs: 1000,
};

/**
 * When to try again after a round, in ms from now; null: no waiting. Back-off grows only with answers that say
 * "not now" (the client's backoffDelay: doubling, equal jitter); silence is probed at a steady pace, so an outage
 * of any length is noticed within `probeMaxMs` of its end.
 */
export function retryDelayMs(
  outcome: RoundOutcome,
  failures: number,
  timings: SchedulerTimings,
  random: () => number = Math.random,
): number | null {
  if (outcome.kind === 'done' || outcome.kind === 'progress') return null;
  if (outcome.kind === 'recheck' && outcome.afterMs !== undefined) return outcome.afterMs;
  if (outcome.kind === 'refused' && 'signedOut' in outcome && outcome.signedOut === true)
    return SIGNED_OUT_RECHECK_MS;
  if (outcome.kind === 'unreachable') {
    return timings.probeMinMs + random() * (timings.probeMaxMs - timings.probeMinMs);
  }
  return backoffDelay(failures - 1, timings.retryBaseMs, timings.retryMaxMs, random);
}

export interface SchedulerHooks {
  /** One round of uploads. */
  round(): Promise<RoundOutcome>;
  /** A cheap call to the service: true when it answered (whatever it said), false when it did not. */
  probe(): Promise<boolean>;
  /** After each round (and each probe that found no one): how it ended and when the next try is due. */
  ended(outcome: RoundOutcome, retryAt: number | null): void;
}

interface Job {
  task: () => Promise<void>;
  resolve: () => void;
  reject: (error: unknown) => void;
}

/**
 * The engine's one loop over one queue. Local work (scans, bursts of changes) runs in order, one piece at a
 * time; a round of uploads runs when one is wanted and no local work waits, so it sees every change recorded so
 * far, or once it has been wanted for `roundMaxDelayMs`, between two pieces of local work. After a failed round no round runs until its retry is due (a probe first, while offline), unless one is
 * asked for explicitly ("sync now").
 */
export class Scheduler {
  /** When the next try is due, while waiting out a failure. */
  retryAt: number | null = null;
  private readonly queue: Job[] = [];
  private roundWanted = false;
  /** Since when a round has been wanted (null: none is). */
  private wantedSince: number | null = null;
  private forced = false;
  private roundWaiters: (() => void)[] = [];
  private loop: Promise<void> | null = null;
  private timer: NodeJS.Timeout | null = null;
  /** Rounds in a row that got an answer but did not go through: the exponent of the back-off. */
  private failures = 0;
  /** Changes whenever a wait starts or ends, so that a probe that answers late does not act on an old wait. */
  private wait = 0;
  /** Whether the current wait holds back rounds that are wanted (every wait but a recheck's). */
  private waitHolds = true;
  private stopped = false;

  constructor(
    private readonly hooks: SchedulerHooks,
    private readonly timings: SchedulerTimings = DEFAULT_TIMINGS,
    private readonly random: () => number = Math.random,
  ) {}

  /** Local work, run in order after what is queued; resolves (or rejects) when it ran. */
  run(task: () => Promise<void>): Promise<void> {
    if (this.stopped) return Promise.resolve();
    return new Promise((resolve, reject) => {
      this.queue.push({ task, resolve, reject });
      this.kick();
    });
  }

  /** A round as soon as the queue is empty, unless a failure is being waited out (its retry will run one). */
  want(): void {
    if (this.stopped) return;
    this.wantRound();
    this.kick();
  }

  /** A round now, even while waiting out a failure; resolves when it ran. */
  now(): Promise<void> {
    if (this.stopped) return Promise.resolve();
    this.wantRound();
    this.forced = true;
    const ran = new Promise<void>((resolve) => this.roundWaiters.push(resolve));
    this.kick();
    return ran;
  }

  /** Stops taking work, lets the running piece finish, and drops what is queued. */
  async stop(): Promise<void> {
    this.stopped = true;
    this.endWait();
    await this.loop;
    for (const job of this.queue.splice(0)) job.resolve();
    for (const resolve of this.roundWaiters.splice(0)) resolve();
  }

  private kick(): void {
    if (this.loop || this.stopped) return;
    this.loop = this.drain().finally(() => {
      this.loop = null;
      if (this.queue.length > 0 || this.roundDue()) this.kick();
    });
  }

  private wantRound(): void {
    this.roundWanted = true;
    this.wantedSince ??= Date.now();
  }

  private roundDue(): boolean {
    return this.roundWanted && (this.forced || this.retryAt === null || !this.waitHolds);
  }

  /** A due round that waited long enough behind local work goes before the next piece of it. */
  private roundOverdue(): boolean {
    const limit = this.timings.roundMaxDelayMs ?? DEFAULT_TIMINGS.roundMaxDelayMs!;
    return this.wantedSince !== null && Date.now() - this.wantedSince >= limit;
  }

  private async drain(): Promise<void> {
    while (!this.stopped) {
      const roundFirst = this.roundDue() && (this.queue.length === 0 || this.roundOverdue());
      const job = roundFirst ? undefined : this.queue.shift();
      if (job) {
        await job.task().then(job.resolve, job.reject);
        continue;
      }
      if (!this.roundDue()) return;
      this.roundWanted = false;
      this.wantedSince = null;
      this.forced = false;
      const waiters = this.roundWaiters.splice(0);
      try {
        this.afterRound(await this.hooks.round());
      } finally {
        for (const resolve of waiters) resolve();
      }
    }
  }

  private afterRound(outcome: RoundOutcome): void {
    this.endWait();
    if (outcome.kind === 'done' || outcome.kind === 'progress') this.failures = 0;
    else if (outcome.kind !== 'unreachable') this.failures++;
    if (outcome.kind === 'progress') this.wantRound();
    const delay = retryDelayMs(outcome, this.failures, this.timings, this.random);
    if (delay !== null) this.startWait(delay, outcome.kind === 'unreachable', outcome.kind !== 'recheck');
    this.hooks.ended(outcome, this.retryAt);
  }

  private startWait(delay: number, probeFirst: boolean, holds = true): void {
    if (this.stopped) return;
    const wait = ++this.wait;
    this.waitHolds = holds;
    this.retryAt = Date.now() + delay;
    this.timer = setTimeout(() => void this.retryDue(wait, probeFirst), delay);
    this.timer.unref();
  }

  private endWait(): void {
    this.wait++;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    this.retryAt = null;
  }

  private async retryDue(wait: number, probeFirst: boolean): Promise<void> {
    if (probeFirst) {
      const answered = await this.hooks.probe();
      if (wait !== this.wait || this.stopped) return; // a round ran meanwhile and decided for itself
      if (!answered) {
        const outcome = { kind: 'unreachable', phase: 'offline', message: 'no answer' } as const;
        this.startWait(retryDelayMs(outcome, this.failures, this.timings, this.random)!, true);
        return;
      }
    }
    if (wait !== this.wait || this.stopped) return;
    this.endWait();
    this.wantRound();
    this.kick();
  }
}
