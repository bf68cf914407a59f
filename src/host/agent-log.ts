import { createRequire } from 'node:module';
import type { Logger, default as Pino } from 'pino';
import { newIncidentId } from './incident.ts';
import { DEFAULT_LOG_MAX_BYTES, openLogFile, type LogFile } from './log-file.ts';
import { defaultAgentLogPath } from './paths.ts';

/** Past this size the log is moved to `agent.log.1` (one old copy kept), at start and while running. */
export const MAX_LOG_BYTES = DEFAULT_LOG_MAX_BYTES;

let opened: { path: string; logger: Logger; file: LogFile } | null = null;

const require = createRequire(import.meta.url);

/**
 * The agent's log: pino JSON lines in the data folder, 0600, rotated by size. Opened on first use, so commands
 * that log nothing (`--version`, `status`) never create it. Secrets are never passed to it; the redaction is a
 * second line of defence for an error that quotes a request.
 */
export function agentLog(at?: string): Logger {
  if (opened && (at === undefined || opened.path === at)) return opened.logger;
  const path = at ?? defaultAgentLogPath();
  // Sized and summed up while running: a request that logs a stack cannot fill the disk (openLogFile).
  const file = openLogFile(path);
  // pino (and its ten packages) loaded on the first line logged, not with every module that may log: `flowsync
  // status`'s look at the service opens an agent that logs nothing (0.04-0.08 s of its CPU).
  const pino = require('pino') as typeof Pino;
  const logger = pino(
    {
      base: { pid: process.pid },
      redact: ['*.authorization', '*.token', '*.secret', '*.api_key', 'req.headers.authorization'],
    },
    file,
  );
  opened = { path, logger, file };
  return logger;
}

export function agentLogPath(): string {
  return opened?.path ?? defaultAgentLogPath();
}

/** A bug, logged: its short id, and where its details are, as the window and the CLI say it. */
export interface Incident {
  id: string;
  /** "the details are in <log>", or, when the log could not be written, the error's own line and why. */
  details: string;
  /** Whether the log has it. */
  logged: boolean;
}

/**
 * Logs an error nobody foresaw (a bug) with a short incident id: the window and the CLI show the id and the log's
 * path instead of a stack, and the log has the stack under the same id. A log that cannot be written (the data
 * folder full or read-only) is never pointed to: the error's own line is said instead.
 */
export function reportIncident(error: unknown, context: Record<string, unknown> = {}): Incident {
  const id = newIncidentId();
  try {
    agentLog().error({ incident: id, ...context, err: error }, 'incident');
    const refused = opened?.file.refused?.();
    if (refused) throw refused; // the log counted the line as lost: it is not there to point to
    return { id, details: `the details are in ${agentLogPath()}`, logged: true };
  } catch (logError) {
    // A log that cannot be written must not turn one failure into two; the id and the error's line are shown.
    const why = logError instanceof Error ? logError.message : String(logError);
    const what = error instanceof Error ? error.message : String(error);
    return {
      id,
      details: `${what.split('\n')[0]} (${agentLogPath()} could not be written: ${why})`,
      logged: false,
    };
  }
}

/**
 * The one catch for work nobody awaits (a background check, a push to the windows): a failure it does not expect is
 * logged with an incident id, never silent and never a crash. What `expected` accepts (a folder gone meanwhile, the
 * agent stopping) is said elsewhere, or is nothing to say. Eight such catches swallowed every error before.
 */
export function logUnexpected(
  during: string,
  expected: (error: unknown) => boolean = () => false,
): (error: unknown) => void {
  return (error) => {
    if (!expected(error)) reportIncident(error, { during });
  };
}
