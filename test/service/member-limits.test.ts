import { describe, expect, it } from 'vitest';
import { takeCall, type Bucket, type MemberRate } from '../../src/service/http/member-limits.ts';

/** The per-member limit's one rule (issue 48), a row a case: a bucket of `burst` calls refilled at `perSecond`. */
const rate: MemberRate = { perSecond: 10, burst: 3 };

const rows: {
  description: string;
  bucket: Bucket | undefined;
  now: number;
  after: Bucket;
  waitMs: number;
}[] = [
  {
    description: "a member's first call: a full bucket, one taken",
    bucket: undefined,
    now: 1000,
    after: { tokens: 2, at: 1000 },
    waitMs: 0,
  },
  {
    description: 'the last call of the burst goes through',
    bucket: { tokens: 1, at: 1000 },
    now: 1000,
    after: { tokens: 0, at: 1000 },
    waitMs: 0,
  },
  {
    description: 'an empty bucket: wait until one call has refilled (100 ms at 10 a second)',
    bucket: { tokens: 0, at: 1000 },
    now: 1000,
    after: { tokens: 0, at: 1000 },
    waitMs: 100,
  },
  {
    description: 'half a call refilled: wait for the other half',
    bucket: { tokens: 0, at: 1000 },
    now: 1050,
    after: { tokens: 0.5, at: 1050 },
    waitMs: 50,
  },
  {
    description: 'a quiet minute refills to the burst, no more',
    bucket: { tokens: 0, at: 1000 },
    now: 61_000,
    after: { tokens: 2, at: 61_000 },
    waitMs: 0,
  },
  {
    description: 'a clock that went back counts no time, and takes nothing it does not have',
    bucket: { tokens: 0.2, at: 5000 },
    now: 4000,
    after: { tokens: 0.2, at: 4000 },
    waitMs: 80,
  },
];

describe('takeCall', () => {
  it.each(rows)('$description', ({ bucket, now, after, waitMs }) => {
    const taken = takeCall(bucket, now, rate);
    expect(taken.waitMs).toBe(waitMs);
    expect(taken.bucket.at).toBe(after.at);
    expect(taken.bucket.tokens).toBeCloseTo(after.tokens, 9);
  });
});
