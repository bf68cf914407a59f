import { printable } from '../protocol/index.ts';

/**
 * A line for the person at the terminal about something the agent repaired on its own (a damaged state or
 * config file): on stderr, so that `--json` output stays parseable.
 */
export function notice(line: string): void {
  process.stderr.write(`flowsync: ${printable(line)}\n`);
}
