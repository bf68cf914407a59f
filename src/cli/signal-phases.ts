/** What Ctrl-C (SIGINT) or SIGTERM does in the current phase of a long-running command. */
export type SignalAction = (signal: NodeJS.Signals) => void;

/**
 * One listener on SIGINT and SIGTERM for the whole life of a command, whose action changes with its phases
 * (starting: exit at once; running: stop cleanly; stopping: exit anyway). Swapping listeners instead
 * (`process.off` of the last one, then `process.once` of the next) loses a signal that arrives in between:
 * Node closes the signal's libuv handle, the signal is addressed to that handle, and it is dropped. `flowsync
 * start` hung that way, idle and never stopping, about once in 30 suite runs (test/cli/signal-phases.test.ts).
 */
export class SignalPhases {
  private action: SignalAction;
  private readonly listener = (signal: NodeJS.Signals) => this.action(signal);

  constructor(initial: SignalAction) {
    this.action = initial;
    process.on('SIGINT', this.listener);
    process.on('SIGTERM', this.listener);
  }

  /** From now on, a signal does this (also one already received and not yet handled). */
  set(action: SignalAction): void {
    this.action = action;
  }

  dispose(): void {
    process.off('SIGINT', this.listener);
    process.off('SIGTERM', this.listener);
  }
}
