import { plural, type DoctorCheck, type DoctorCheckName } from '../../protocol/index.ts';
import type { WatchLimit } from '../../sync/index.ts';

/** A line of the report: what was found and, unless it passed, what to do. */
export function passed(check: DoctorCheckName, message: string, folder: string | null = null): DoctorCheck {
  return { check, verdict: 'pass', folder, message, fix: null };
}

export function warning(
  check: DoctorCheckName,
  message: string,
  fix: string,
  folder: string | null = null,
): DoctorCheck {
  return { check, verdict: 'warn', folder, message, fix };
}

export function failure(
  check: DoctorCheckName,
  message: string,
  fix: string,
  folder: string | null = null,
): DoctorCheck {
  return { check, verdict: 'fail', folder, message, fix };
}

/** Past this share of its limit the watcher is one branch switch away from refusing a flow root. */
const CLOSE_TO_LIMIT = 0.8;

/** The per-user watches to suggest: room for four times what sync needs, and never under the common 524,288. */
export function suggestedUserWatches(needed: number, share: number): number {
  return Math.max(524_288, 2 ** Math.ceil(Math.log2(needed * share * 4)));
}

/**
 * inotify watches: one per folder under the flow roots (the watcher watches folders, not files). More than the
 * limit and a flow root is not watched at all: its edits wait for the periodic rescan (10 minutes), which looks
 * like sync stuck. Pure, so that a limit lower than any machine's is
 * tested without touching /proc.
 */
export function watchesVerdict(needed: number, limit: WatchLimit, share: number): DoctorCheck {
  const allowed = describeLimit(limit, share);
  const folders = plural(needed, 'folder');
  if (needed <= limit.folders * CLOSE_TO_LIMIT)
    return passed('watches', `inotify watches: ${folders} to watch, ${allowed}`);
  const over = needed > limit.folders;
  const message = over
    ? `inotify watches: ${folders} to watch, but ${allowed}: flow roots past that are not watched, and their ` +
      'edits wait for the rescan every 10 minutes instead of going at once'
    : `inotify watches: ${folders} to watch, close to the limit (${allowed}): a branch with more folders stops the watch`;
  const fix =
    limit.setBy === 'kernel'
      ? `raise the kernel's limit: sudo sysctl fs.inotify.max_user_watches=${suggestedUserWatches(needed, share)}, ` +
        'and to keep it after a restart, put that line (without sudo sysctl) in /etc/sysctl.d/90-inotify.conf'
      : limit.setBy === 'environment'
        ? 'unset FLOWSYNC_MAX_WATCHED_FOLDERS (it is for tests)'
        : 'add the folders that need no sync (build output, dependencies) to .gitignore';
  return over ? failure('watches', message, fix) : warning('watches', message, fix);
}

function describeLimit(limit: WatchLimit, share: number): string {
  const most = limit.folders.toLocaleString('en');
  switch (limit.setBy) {
    case 'environment':
      return `flowsync watches at most ${most} (FLOWSYNC_MAX_WATCHED_FOLDERS)`;
    case 'kernel':
      return `flowsync watches at most ${most} (1/${share} of your max_user_watches, ${limit.userWatches!.toLocaleString('en')})`;
    case 'flowsync':
      return `flowsync watches at most ${most} (its own limit${limit.userWatches === null ? '' : `; max_user_watches is ${limit.userWatches.toLocaleString('en')}`})`;
  }
}

/**
 * How far apart this machine's clock and the service's may be before doctor says so. The HTTP Date header is
 * to the second, and the answer's round trip adds its own time, so a second or two is noise; clocks kept by NTP
 * agree within milliseconds. The service stamps every version and every "changed there at" with its clock, and
 * `flowsync restore --at TIME` reads TIME on yours: a minute off picks another version when edits of a file are a
 * minute apart, and far more breaks https (certificates not yet valid). A minute is past any noise.
 */
export const CLOCK_SKEW_LIMIT_MS = 60_000;

/**
 * The service's clock against this one, from its Date header and the local times the call was sent and answered:
 * the service's time is in [date, date + 1 s) and the answer came between `sentAt` and `receivedAt`.
 */
export function clockVerdict(serviceDate: string | null, sentAt: number, receivedAt: number): DoctorCheck {
  const stamped = serviceDate === null ? Number.NaN : Date.parse(serviceDate);
  if (Number.isNaN(stamped))
    return passed('clock', "clock: the service's answer carries no time to compare with");
  const skew = stamped + 500 - (sentAt + receivedAt) / 2;
  const noise = 500 + (receivedAt - sentAt) / 2;
  const apart = Math.max(0, Math.abs(skew) - noise);
  if (apart <= CLOCK_SKEW_LIMIT_MS)
    return passed(
      'clock',
      `clock: this machine's and the service's agree (within ${Math.ceil(noise / 1000)} s)`,
    );
  const side = skew > 0 ? 'behind' : 'ahead of';
  return warning(
    'clock',
    `clock: this machine's clock is ${duration(Math.abs(skew))} ${side} the service's (more than ${CLOCK_SKEW_LIMIT_MS / 1000} s): ` +
      'the times of history, conflicts and `restore --at` are off by that much',
    'turn on time sync: sudo timedatectl set-ntp true (Linux), or "Set time automatically" in the system settings',
  );
}

function duration(ms: number): string {
  const seconds = Math.round(ms / 1000);
  if (seconds < 120) return plural(seconds, 'second');
  const minutes = Math.round(seconds / 60);
  if (minutes < 120) return plural(minutes, 'minute');
  return plural(Math.round(minutes / 60), 'hour');
}

/** The exit code: 0 all passed, 4 warnings only (sync goes on, something needs you), 1 a failure. */
export function doctorExitCode(checks: readonly DoctorCheck[]): 0 | 1 | 4 {
  if (checks.some((check) => check.verdict === 'fail')) return 1;
  return checks.some((check) => check.verdict === 'warn') ? 4 : 0;
}

export function skipped(check: DoctorCheckName, message: string): DoctorCheck {
  return { check, verdict: 'skip', folder: null, message, fix: null };
}
