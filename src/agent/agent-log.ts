import { randomBytes } from 'node:crypto';
import pino, { type Logger } from 'pino';
import { DEFAULT_LOG_MAX_BYTES, openLogFile } from '../service/index.ts';
import { defaultAgentLogPath } from './paths.ts';

/** Past this size the log is moved to `agent.log.1` (one old copy kept), at start and while running. */
export const MAX_LOG_BYTES = DEFAULT_LOG_MAX_BYTES;

let opened: { path: string; logger: Logger } | null = null;

/**
 * The agent's log: pino JSON lines in the data folder, 0600, rotated by size. Opened on first use, so commands
 * that log nothing (`--version`, `status`) never create it. Secrets are never passed to it; the redaction is a
 * second line of defence for an error that quotes a request.
 */
export function agentLog(at?: string): Logger {
  if (opened && (at === undefined || opened.path === at)) return opened.logger;
  const path = at ?? defaultAgentLogPath();
  const logger = pino(
    {
      base: { pid: process.pid },
      redact: ['*.authorization', '*.token', '*.secret', '*.api_key', 'req.headers.authorization'],
    },
    // Sized and summed up while running: a request that logs a stack cannot fill the disk (openLogFile).
    openLogFile(path),
  );
  opened = { path, logger };
  return logger;
}

export function agentLogPath(): string {
  return opened?.path ?? defaultAgentLogPath();
}

/**
 * Logs an error nobody foresaw (a bug) with a short incident id, and returns the id: the window and the CLI show
 * the id and the log's path instead of a stack, and the log has the stack under the same id.
 */
export function reportIncident(error: unknown, context: Record<string, unknown> = {}): string {
  const incident = randomBytes(4).toString('hex');
  try {
    agentLog().error({ incident, ...context, err: error }, 'incident');
  } catch {
    // A log that cannot be written must not turn one failure into two; the id is still shown.
  }
  return incident;
}
