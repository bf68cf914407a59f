import { closeSync, fstatSync, openSync, renameSync, writeSync } from 'node:fs';
import { ensurePrivateFile } from './private-files.ts';
import { storageFaultOf } from './storage-fault.ts';
import { tunable } from './tunable.ts';

/** Past this size a log is moved to `<name>.1` (one old copy kept): a log takes at most twice this on disk. */
export const DEFAULT_LOG_MAX_BYTES = 5 * 1024 * 1024;

/** How often the same line may be written in one second before the rest are only counted. */
export const REPEATS_PER_SECOND = 10;

/** How many different lines a second keeps counts for; past that, lines are written as they come. */
const KINDS_PER_SECOND = 1000;

export interface LogFileOptions {
  /** Default 5 MiB, or `FLOWSYNC_LOG_MAX_BYTES` (tests set a few KiB). */
  maxBytes?: number;
  /** Called for every line (default Date.now); tests pass their own clock. */
  now?: () => number;
}

/** A log as pino writes to it (a `DestinationStream`): sized by `openLogFile`, summed up by `summingLog`. */
export interface LogFile {
  write(line: string): void;
  /** Why the last line could not be written (the disk full, read-only), null once one is written again. */
  refused?(): Error | null;
  /** Writes what is still counted; the file stays open. */
  flush(done?: (error?: Error) => void): void;
  end(): void;
}

interface Seen {
  count: number;
  level: number;
  msg: string;
}

/**
 * One log file, 0600, that no flood of requests can make large: past `maxBytes` it is moved to `.1` while running
 * (before, logs rotated only at start, and 108,900 requests in 20 s added 103 MiB to agent.log), and its lines are
 * summed up as `summingLog` says. Writes are synchronous: an asynchronous stream buffers in memory whatever the disk
 * has not taken yet, and a flood then grows the process instead of the file.
 */
export function openLogFile(path: string, options: LogFileOptions = {}): LogFile {
  const maxBytes = options.maxBytes ?? tunable('FLOWSYNC_LOG_MAX_BYTES', DEFAULT_LOG_MAX_BYTES);
  let fd = -1;
  let size = 0;
  const open = () => {
    ensurePrivateFile(path);
    fd = openSync(path, 'a', 0o600);
    size = fstatSync(fd).size;
  };
  const rotate = () => {
    closeSync(fd);
    try {
      renameSync(path, `${path}.1`);
    } catch {
      // Windows refuses to rename a file another program holds open (a viewer, a tail): the log goes on past its
      // cap until the next try, rather than turning every logged request into an error.
    }
    open();
  };
  open();
  if (size > maxBytes) rotate();
  // Lines the disk refused (full, read-only): a log is never why a request or the agent fails; counted, and the
  // count written once the disk takes lines again.
  let dropped = 0;
  let refused: Error | null = null;
  const append = (text: string) => {
    const bytes = Buffer.byteLength(text);
    if (size > 0 && size + bytes > maxBytes) rotate();
    writeSync(fd, text);
    size += bytes;
  };
  const log = summingLog(
    (text) => {
      try {
        if (dropped > 0) {
          const msg = `${dropped} log lines were lost: the disk refused them`;
          append(`${JSON.stringify({ level: 40, time: Date.now(), dropped, msg })}\n`);
          dropped = 0;
        }
        append(text);
        refused = null;
      } catch (error) {
        if (storageFaultOf(error) === null) throw error;
        dropped++;
        refused = error as Error;
      }
    },
    { now: options.now, close: () => closeSync(fd) },
  );
  return { ...log, refused: () => refused };
}

/**
 * Log lines on their way to `append`, summed up: a line that comes back more than REPEATS_PER_SECOND times in a
 * second is counted, then written once as "… repeated N more times" (406,200 refused calls in 20 s added 38 MiB to
 * service.log). Lines are the same when they differ only in numbers (the time, a duration); the level is kept.
 */
export function summingLog(
  append: (text: string) => void,
  options: { now?: () => number; flush?: () => void; close?: () => void } = {},
): LogFile {
  const now = options.now ?? Date.now;
  let second = 0;
  let seen = new Map<string, Seen>();
  let summary: NodeJS.Timeout | undefined;

  const sumUp = () => {
    clearTimeout(summary);
    summary = undefined;
    const counted = seen;
    seen = new Map();
    for (const { count, level, msg } of counted.values()) {
      const more = count - REPEATS_PER_SECOND;
      if (more <= 0) continue;
      const text = `${msg} (repeated ${more.toLocaleString('en-US')} more times in 1 s)`;
      append(`${JSON.stringify({ level, time: now(), repeated: more, msg: text })}\n`);
    }
  };

  return {
    write(line) {
      const at = now();
      if (at - second >= 1000) {
        sumUp();
        second = at;
      }
      const kind = sameLine(line);
      const counted = seen.get(kind);
      if (counted) {
        counted.count++;
        if (counted.count > REPEATS_PER_SECOND) {
          // The count is written when the second is over, even if nothing else is logged by then.
          summary ??= setTimeout(sumUp, Math.max(0, second + 1000 - at)).unref();
          return;
        }
      } else if (seen.size < KINDS_PER_SECOND) {
        seen.set(kind, { count: 1, level: levelOf(line), msg: msgOf(line) });
      }
      append(line.endsWith('\n') ? line : `${line}\n`);
    },
    flush(done) {
      sumUp();
      options.flush?.();
      done?.();
    },
    end() {
      sumUp();
      options.close?.();
    },
  };
}

/** A pino line with its numbers (time, durations, counts) taken out, the level kept. */
function sameLine(line: string): string {
  return line.replace(/"(?!level")([^"\\]+)":-?[\d.e+-]+/g, '"$1":#');
}

function levelOf(line: string): number {
  return Number(/"level":(\d+)/.exec(line)?.[1] ?? 30);
}

function msgOf(line: string): string {
  const quoted = /"msg":("(?:[^"\\]|\\.)*")/.exec(line)?.[1];
  if (quoted === undefined) return 'a log line';
  try {
    return String(JSON.parse(quoted));
  } catch {
    return 'a log line';
  }
}
