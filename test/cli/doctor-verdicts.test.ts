import { describe, expect, it } from 'vitest';
import { watchLimitFor } from '../../src/sync/index.ts';
import {
  CLOCK_SKEW_LIMIT_MS,
  clockVerdict,
  doctorExitCode,
  passed,
  suggestedUserWatches,
  warning,
  watchesVerdict,
} from '../../src/cli/doctor/verdicts.ts';

// /proc/sys/fs/inotify/max_user_watches cannot be lowered by a test: the verdict is a pure function of the count and
// the limit, and the CLI test reads the real file.
describe('the inotify watches verdict', () => {
  const kernel = (userWatches: number) => ({
    folders: Math.floor(userWatches / 4),
    userWatches,
    setBy: 'kernel' as const,
  });

  it('passes with room to spare, saying the limit and where it comes from', () => {
    const check = watchesVerdict(120, kernel(8192), 4);
    expect(check.verdict).toBe('pass');
    expect(check.message).toBe(
      'inotify watches: 120 folders to watch, flowsync watches at most 2,048 (1/4 of your max_user_watches, 8,192)',
    );
  });

  it('fails when max_user_watches is lower than sync needs, with the sysctl that raises it and keeps it', () => {
    const check = watchesVerdict(3000, kernel(8192), 4);
    expect(check.verdict).toBe('fail');
    expect(check.message).toContain('3,000 folders to watch, but flowsync watches at most 2,048');
    expect(check.message).toContain('not watched');
    expect(check.fix).toBe(
      "raise the kernel's limit: sudo sysctl fs.inotify.max_user_watches=524288, and to keep it after a restart, " +
        'put that line (without sudo sysctl) in /etc/sysctl.d/90-inotify.conf',
    );
  });

  it('warns when close to the limit: a branch with more folders would stop the watch', () => {
    const check = watchesVerdict(1900, kernel(8192), 4);
    expect(check.verdict).toBe('warn');
    expect(check.message).toContain('close to the');
  });

  it("says what to do when flowsync's own cap or the test variable is the limit", () => {
    const own = watchesVerdict(25_000, { folders: 20_000, userWatches: 1_000_000, setBy: 'flowsync' }, 4);
    expect(own.fix).toContain('.gitignore');
    const set = watchesVerdict(5, { folders: 2, userWatches: null, setBy: 'environment' }, 4);
    expect(set.fix).toBe('unset FLOWSYNC_MAX_WATCHED_FOLDERS (it is for tests)');
  });

  it('takes the limit as the watcher does: a quarter of max_user_watches, at most 20,000', () => {
    expect(watchLimitFor(8192)).toEqual({ folders: 2048, userWatches: 8192, setBy: 'kernel' });
    expect(watchLimitFor(1_000_000)).toEqual({ folders: 20_000, userWatches: 1_000_000, setBy: 'flowsync' });
    expect(watchLimitFor(null)).toEqual({ folders: 20_000, userWatches: null, setBy: 'flowsync' });
  });

  it('suggests four times what sync needs, never under 524,288, as a power of two', () => {
    expect(suggestedUserWatches(100, 4)).toBe(524_288);
    expect(suggestedUserWatches(200_000, 4)).toBe(4_194_304);
  });
});

describe('the clock verdict', () => {
  const at = Date.parse('2026-11-25T12:00:00Z');

  it("passes when the service's Date is within the second and the round trip", () => {
    expect(clockVerdict('Wed, 25 Nov 2026 12:00:00 GMT', at + 200, at + 400).verdict).toBe('pass');
  });

  it('warns past the limit, saying which side is ahead and by how much', () => {
    const behind = clockVerdict('Wed, 25 Nov 2026 12:05:00 GMT', at, at + 100);
    expect(behind.verdict).toBe('warn');
    expect(behind.message).toContain("this machine's clock is 5 minutes behind the service's");
    expect(behind.fix).toContain('timedatectl set-ntp true');
    const ahead = clockVerdict('Wed, 25 Nov 2026 11:58:00 GMT', at, at + 100);
    expect(ahead.message).toContain('2 minutes ahead of');
  });

  it('takes the Date header to the second and the round trip as noise, not skew', () => {
    const date = new Date(at + CLOCK_SKEW_LIMIT_MS + 1000).toUTCString();
    // 61 s apart by the header, but the answer took 2 s to come: it may have been stamped within the limit.
    expect(clockVerdict(date, at, at + 2000).verdict).toBe('pass');
    // The same header with an answer at once: past the limit.
    expect(clockVerdict(date, at, at).verdict).toBe('warn');
  });

  it('passes an answer with no Date, saying it could not compare', () => {
    expect(clockVerdict(null, at, at).message).toContain('no time to compare');
  });
});

describe('the exit code', () => {
  it('is 0 when all pass, 4 with warnings only, 1 with a failure', () => {
    const ok = passed('agent', 'fine');
    const warned = warning('agent', 'hm', 'do this');
    expect(doctorExitCode([ok])).toBe(0);
    expect(doctorExitCode([ok, warned])).toBe(4);
    expect(doctorExitCode([warned, { ...warned, verdict: 'fail' }])).toBe(1);
  });
});
