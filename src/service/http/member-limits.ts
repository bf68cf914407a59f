import { tunable } from '../../host/index.ts';

/**
 * How many calls one member may make, per service process: a token bucket of `burst` calls, refilled at
 * `perSecond`. Far above an agent's pattern (a round is a few calls, the service check one a minute); its purpose is
 * that one runaway script cannot starve the team. With N processes behind a balancer, a member may make N× this.
 * The shared tokens are not limited (they behave as before members; a team still on one would share one bucket).
 */
export interface MemberRate {
  perSecond: number;
  burst: number;
}

/** 100 calls a second, 400 at once. */
export const DEFAULT_MEMBER_RATE: MemberRate = { perSecond: 100, burst: 400 };

/** `flowsync serve`'s rate: $FLOWSYNC_MEMBER_RATE a second (0: no limit), $FLOWSYNC_MEMBER_BURST at once. */
export function memberRateFromEnv(env: NodeJS.ProcessEnv = process.env): MemberRate | null {
  if (env.FLOWSYNC_MEMBER_RATE?.trim() === '0') return null;
  const perSecond = tunable('FLOWSYNC_MEMBER_RATE', DEFAULT_MEMBER_RATE.perSecond, env);
  return { perSecond, burst: Math.max(1, tunable('FLOWSYNC_MEMBER_BURST', DEFAULT_MEMBER_RATE.burst, env)) };
}

export interface Bucket {
  /** Calls it may make now (a fraction refills between calls). */
  tokens: number;
  /** When it was last counted, in milliseconds. */
  at: number;
}

/**
 * One call taken from a bucket at `now`: the bucket after, and how long the caller must wait first (0: admitted).
 * Pure: the limiter's whole rule, for its row table.
 */
export function takeCall(
  bucket: Bucket | undefined,
  now: number,
  rate: MemberRate,
): { bucket: Bucket; waitMs: number } {
  const since = bucket === undefined ? 0 : Math.max(0, now - bucket.at);
  const tokens = Math.min(rate.burst, (bucket?.tokens ?? rate.burst) + (since * rate.perSecond) / 1000);
  if (tokens >= 1) return { bucket: { tokens: tokens - 1, at: now }, waitMs: 0 };
  return { bucket: { tokens, at: now }, waitMs: Math.ceil(((1 - tokens) * 1000) / rate.perSecond) };
}

/** Every member's bucket in this process; a member not heard from for a minute is forgotten (full again). */
export class MemberLimits {
  private readonly buckets = new Map<string, Bucket>();
  private swept = 0;

  /** `rate` null: no limit. */
  constructor(private readonly rate: MemberRate | null = DEFAULT_MEMBER_RATE) {}

  /** 0 when the call may go on, else the milliseconds to wait. */
  take(memberId: string, now: number): number {
    if (this.rate === null) return 0;
    if (now - this.swept > 60_000) {
      for (const [id, bucket] of this.buckets) if (now - bucket.at > 60_000) this.buckets.delete(id);
      this.swept = now;
    }
    const { bucket, waitMs } = takeCall(this.buckets.get(memberId), now, this.rate);
    this.buckets.set(memberId, bucket);
    return waitMs;
  }

  get perSecond(): number {
    return this.rate?.perSecond ?? Number.POSITIVE_INFINITY;
  }
}
