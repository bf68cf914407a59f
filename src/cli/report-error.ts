import { RemoteError } from '../client/index.ts';
import { printable } from '../protocol/index.ts';
import { classifyError } from '../agent/index.ts';
import { reportIncident } from '../host/index.ts';
import { UsageError } from './usage-error.ts';
import { EXIT } from './exit-codes.ts';

/**
 * Prints an error as one line and returns the exit code. A person's mistake or the service's answer is said as
 * it is (the agent's one classifier decides which is which); a bug gets an incident id, with its stack in the
 * agent's log, never on the terminal.
 */
export function reportError(error: unknown): number {
  const classified = classifyError(error, [
    (e) =>
      e instanceof UsageError
        ? { outcome: 'usage' as const, apiCode: 'invalid_input' as const, message: e.message, kind: null }
        : null,
  ]);
  if (classified) {
    // The CLI's line keeps what a script or an operator needs: the function, the HTTP status, the trace id.
    // It may quote the service, a file name or a config value: printed with their control characters spelled out.
    const line = error instanceof RemoteError ? error.message : classified.message;
    process.stderr.write(`flowsync: ${printable(line)}\n`);
    return EXIT[classified.outcome];
  }
  const incident = reportIncident(error);
  process.stderr.write(
    `flowsync: something went wrong (incident ${incident.id}); ${printable(incident.details)}. ` +
      `Please report it with ${incident.logged ? 'that part of the log' : 'this line'}.\n`,
  );
  return EXIT.remote;
}
