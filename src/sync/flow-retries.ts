import { backoffDelay } from '../client/index.ts';

/**
 * Flows the service failed to store while it stored others (a 5xx for that flow alone, found by bisecting its
 * batch): each waits out a back-off of its own (1 s doubling to 60 s, the client's backoffDelay) and is
 * left out of the rounds until then, so that one failing flow never holds back the others. In memory only: after
 * a restart every flow is tried again.
 */
export class FlowRetries {
  private readonly waiting = new Map<string, { failures: number; dueAt: number; message: string }>();

  constructor(
    private readonly baseMs: number,
    private readonly maxMs: number,
    private readonly random: () => number = Math.random,
  ) {}

  failed(flowPath: string, message: string, now = Date.now()): void {
    const failures = (this.waiting.get(flowPath)?.failures ?? 0) + 1;
    const delay = backoffDelay(failures - 1, this.baseMs, this.maxMs, this.random);
    this.waiting.set(flowPath, { failures, dueAt: now + delay, message });
  }

  /** Whether the flow failed alone before (and has not gone through since). */
  has(flowPath: string): boolean {
    return this.waiting.has(flowPath);
  }

  succeeded(flowPath: string): void {
    this.waiting.delete(flowPath);
  }

  /** Whether the flow is still waiting out its back-off (not to be sent this round). */
  isWaiting(flowPath: string, now = Date.now()): boolean {
    const entry = this.waiting.get(flowPath);
    return entry !== undefined && entry.dueAt > now;
  }

  /** In how many ms the first waiting flow is due (0 when one is due already); null when none waits. */
  nextDueInMs(now = Date.now()): number | null {
    if (this.waiting.size === 0) return null;
    return Math.max(0, Math.min(...Array.from(this.waiting.values(), (entry) => entry.dueAt)) - now);
  }

  /** One line per waiting flow, for the status. */
  messages(): string[] {
    return Array.from(
      this.waiting,
      ([flowPath, { message }]) =>
        `${flowPath} could not be stored (${message}); it is tried again on its own`,
    );
  }
}
