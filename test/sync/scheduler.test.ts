import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { backoffDelay } from '../../src/client/index.ts';
import { Coalescer } from '../../src/sync/coalescer.ts';
import { FlowRetries } from '../../src/sync/flow-retries.ts';
import { DEFAULT_TIMINGS, retryDelayMs, Scheduler, type RoundOutcome } from '../../src/sync/scheduler.ts';

const offline: RoundOutcome = { kind: 'unreachable', phase: 'offline', message: 'ECONNREFUSED' };
const busy: RoundOutcome = { kind: 'refused', phase: 'unavailable', message: 'HTTP 503' };
const stalled: RoundOutcome = { kind: 'stalled' };

describe('retryDelayMs', () => {
  it('probes every 2–4 s while the service does not answer, however long the outage', () => {
    for (const failures of [0, 1, 5, 50]) {
      expect(retryDelayMs(offline, failures, DEFAULT_TIMINGS, () => 0)).toBe(2000);
      expect(retryDelayMs(offline, failures, DEFAULT_TIMINGS, () => 0.999_999)).toBeLessThanOrEqual(4000);
    }
  });

  it('backs off exponentially from 1 s to 60 s after answers that say "not now", half of it jitter', () => {
    const top = (failures: number) => retryDelayMs(busy, failures, DEFAULT_TIMINGS, () => 1);
    expect([1, 2, 3, 4, 7, 8, 20].map(top)).toEqual([1000, 2000, 4000, 8000, 60_000, 60_000, 60_000]);
    expect(retryDelayMs(busy, 3, DEFAULT_TIMINGS, () => 0)).toBe(2000);
    expect(retryDelayMs(stalled, 2, DEFAULT_TIMINGS, () => 1)).toBe(2000);
  });

  it("waits a minute, every time, once the member's token is over (removed, revoked, expired): never a retry loop", () => {
    const signedOut: RoundOutcome = { kind: 'refused', phase: 'unauthorized', message: 'm', signedOut: true };
    for (const failures of [1, 2, 5, 50])
      for (const random of [() => 0, () => 1])
        expect(retryDelayMs(signedOut, failures, DEFAULT_TIMINGS, random)).toBe(60_000);
  });

  it('does not wait after a round that went through', () => {
    expect(retryDelayMs({ kind: 'done' }, 3, DEFAULT_TIMINGS)).toBeNull();
    expect(retryDelayMs({ kind: 'progress' }, 3, DEFAULT_TIMINGS)).toBeNull();
  });

  it("is the client's backoffDelay after a refused round, as is the wait of a flow that failed alone", () => {
    const { retryBaseMs, retryMaxMs } = DEFAULT_TIMINGS;
    const retries = new FlowRetries(retryBaseMs, retryMaxMs, () => 0.25);
    for (let failures = 1; failures <= 10; failures++) {
      const expected = backoffDelay(failures - 1, retryBaseMs, retryMaxMs, () => 0.25);
      expect(retryDelayMs(busy, failures, DEFAULT_TIMINGS, () => 0.25)).toBe(expected);
      retries.failed('flows/a', 'HTTP 500', 0);
      expect(retries.nextDueInMs(0)).toBe(expected);
    }
  });
});

describe('the scheduler', () => {
  beforeEach(() => vi.useFakeTimers());
  afterEach(() => vi.useRealTimers());

  /** A scheduler whose rounds end as `outcomes` says (the last one repeats), recording what ran. */
  function scheduler(outcomes: RoundOutcome[], probe: () => boolean = () => true) {
    const log: string[] = [];
    const retryAts: (number | null)[] = [];
    let round = 0;
    const s = new Scheduler(
      {
        round: async () => {
          log.push('round');
          return outcomes[Math.min(round++, outcomes.length - 1)]!;
        },
        probe: async () => {
          log.push('probe');
          return probe();
        },
        ended: (_outcome, retryAt) => retryAts.push(retryAt),
      },
      DEFAULT_TIMINGS,
      () => 0.5,
    );
    return { s, log, retryAts };
  }

  it('runs queued local work before a wanted round, one piece at a time', async () => {
    const { s, log } = scheduler([{ kind: 'done' }]);
    const scan = (name: string) =>
      s.run(async () => {
        log.push(`${name} start`);
        await new Promise((done) => setTimeout(done, 10));
        log.push(`${name} end`);
      });
    const first = scan('scan 1');
    s.want();
    const second = scan('scan 2');
    await vi.advanceTimersByTimeAsync(20);
    await Promise.all([first, second]);
    expect(log).toEqual(['scan 1 start', 'scan 1 end', 'scan 2 start', 'scan 2 end', 'round']);
  });

  it('runs a round wanted for 1 s before the next piece of local work, however long the local work goes on', async () => {
    const { s, log } = scheduler([{ kind: 'done' }]);
    // A storm of writes: a burst of 200 ms handed over, and the next one queued, for 5 s without a break.
    let bursts = 0;
    const burst = (): Promise<void> =>
      s.run(async () => {
        bursts++;
        log.push('burst');
        await new Promise((done) => setTimeout(done, 200));
        if (bursts < 25) void burst();
        s.want();
      });
    void burst();
    await vi.advanceTimersByTimeAsync(5200);
    const rounds = log.flatMap((entry, at) => (entry === 'round' ? [at] : []));
    expect(rounds.length).toBeGreaterThanOrEqual(4);
    // The first round after the first want (at 200 ms) runs after 1 s of bursts, not after all 25 of them.
    expect(rounds[0]).toBeLessThanOrEqual(7);
    expect(bursts).toBe(25);
  });

  it('while offline, probes every few seconds and starts a round only once the service answers', async () => {
    let up = false;
    const { s, log } = scheduler([offline, { kind: 'done' }], () => up);
    await s.now();
    expect(s.retryAt).not.toBeNull();
    expect(s.retryAt! - Date.now()).toBeLessThanOrEqual(4000);
    // Changes during the outage do not each hit the network.
    for (let change = 0; change < 50; change++) s.want();
    await vi.advanceTimersByTimeAsync(30_000);
    expect(log.filter((entry) => entry === 'round')).toHaveLength(1);
    const probes = log.filter((entry) => entry === 'probe').length;
    expect(probes).toBeGreaterThanOrEqual(30_000 / 4000 - 1);
    expect(s.retryAt! - Date.now()).toBeLessThanOrEqual(4000);
    up = true;
    await vi.advanceTimersByTimeAsync(4000);
    expect(log.at(-1)).toBe('round');
    expect(s.retryAt).toBeNull();
  });

  it('backs off, doubling, after rounds that change nothing, instead of running again at once', async () => {
    const { s, log, retryAts } = scheduler([stalled]);
    await s.now();
    await vi.advanceTimersByTimeAsync(60_000);
    // 0.75 + 1.5 + 3 + 6 + 12 + 24 s of waits fit in a minute: 7 rounds, not thousands.
    expect(log.filter((entry) => entry === 'round')).toHaveLength(7);
    const waits = retryAts.map((at, i) => at! - (retryAts[i - 1] ?? at! - 750));
    expect(waits.slice(1, 4).every((wait, i) => wait > waits[i]!)).toBe(true);
  });

  it('runs again at once after a round that made progress, and not after one that was done', async () => {
    const { s, log } = scheduler([{ kind: 'progress' }, { kind: 'progress' }, { kind: 'done' }]);
    await s.now();
    await vi.advanceTimersByTimeAsync(0);
    expect(log).toEqual(['round', 'round', 'round']);
    await vi.advanceTimersByTimeAsync(60_000);
    expect(log).toHaveLength(3);
  });

  it('looks again at unreadable files with a growing back-off, and never holds back a round a change asks for', async () => {
    const { s, log } = scheduler([{ kind: 'recheck' }]);
    await s.now();
    await vi.advanceTimersByTimeAsync(60_000);
    // The same waits as a stalled round: 7 looks in a minute, not thousands.
    expect(log.filter((entry) => entry === 'round')).toHaveLength(7);
    // An edit during the wait goes at once, not after the wait (up to a minute).
    const before = log.length;
    s.want();
    await vi.advanceTimersByTimeAsync(0);
    expect(log).toHaveLength(before + 1);
    expect(s.retryAt).not.toBeNull();
  });

  it('runs a round asked for explicitly ("sync now") even while backing off', async () => {
    const { s, log } = scheduler([busy, { kind: 'done' }]);
    await s.now();
    s.want();
    await vi.advanceTimersByTimeAsync(10);
    expect(log).toEqual(['round']);
    await s.now();
    expect(log).toEqual(['round', 'round']);
    expect(s.retryAt).toBeNull();
  });

  it('stops: the running piece finishes, queued work is dropped, no timer stays', async () => {
    const { s, log } = scheduler([offline]);
    await s.now();
    await s.stop();
    await s.run(async () => {
      log.push('after stop');
    });
    await vi.advanceTimersByTimeAsync(60_000);
    expect(log).toEqual(['round']);
    expect(vi.getTimerCount()).toBe(0);
  });
});

describe('the coalescer', () => {
  beforeEach(() => vi.useFakeTimers());
  afterEach(() => vi.useRealTimers());

  function coalescer() {
    const flushes: string[][] = [];
    const c = new Coalescer((paths) => flushes.push([...paths].sort()), 30, 500);
    return { c, flushes };
  }

  it('hands over a burst once it has been quiet for 30 ms, each path once', () => {
    const { c, flushes } = coalescer();
    c.add('flows/a/x.yaml');
    vi.advanceTimersByTime(20);
    c.add('flows/a/x.yaml');
    c.add('flows/a/y.yaml');
    vi.advanceTimersByTime(29);
    expect(flushes).toEqual([]);
    vi.advanceTimersByTime(1);
    expect(flushes).toEqual([['flows/a/x.yaml', 'flows/a/y.yaml']]);
  });

  it('hands over a burst that never goes quiet (a git checkout) every 500 ms', () => {
    const { c, flushes } = coalescer();
    for (let t = 0; t < 1200; t += 10) {
      c.add(`flows/f/${t}.yaml`);
      vi.advanceTimersByTime(10);
    }
    expect(flushes.length).toBe(2);
    expect(flushes[0]).toHaveLength(50);
    vi.advanceTimersByTime(30);
    expect(flushes.flat()).toHaveLength(120);
  });

  it('drops what is pending when cleared', () => {
    const { c, flushes } = coalescer();
    c.add('flows/a/x.yaml');
    c.clear();
    vi.advanceTimersByTime(1000);
    expect(flushes).toEqual([]);
    expect(vi.getTimerCount()).toBe(0);
  });
});
