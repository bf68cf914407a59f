import { describe, expect, it } from 'vitest';
import { backoffDelay } from '../../src/client/index.ts';

describe('backoffDelay, the one back-off of the client, the scheduler and a failing flow', () => {
  it('doubles its ceiling per attempt from the base, up to the maximum', () => {
    const ceiling = (attempt: number) => backoffDelay(attempt, 250, 10_000, () => 1);
    expect([0, 1, 2, 3, 4, 5, 6].map(ceiling)).toEqual([250, 500, 1000, 2000, 4000, 8000, 10_000]);
    expect(ceiling(1_000)).toBe(10_000);
  });

  it('keeps half the ceiling fixed and makes the other half random (equal jitter)', () => {
    expect(backoffDelay(2, 1000, 60_000, () => 0)).toBe(2000);
    expect(backoffDelay(2, 1000, 60_000, () => 0.5)).toBe(3000);
    expect(backoffDelay(2, 1000, 60_000, () => 0.999)).toBeLessThan(4000);
  });

  it('takes an attempt below zero as the first', () => {
    expect(backoffDelay(-1, 1000, 60_000, () => 1)).toBe(1000);
  });
});
