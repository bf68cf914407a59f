import { setTimeout as sleep } from 'node:timers/promises';

/** What the looks the live feed asks for need of the engine. */
export interface ToldLooksPort {
  /** Compares these flows (their aggregates on the service now) with what this checkout acknowledged. */
  check(told: ReadonlyMap<string, string | null>): Promise<unknown>;
  /** Whether the engine looks at the service now (it rests: not stopped, offline or in a round). */
  canLook(): boolean;
}

/**
 * The looks at the service the live feed asks for (a teammate wrote these flows): one at a time, whatever comes
 * meanwhile gathered into the next one, and kept while the engine cannot look (a round, an outage) until it rests
 * again (`resting`). A burst of 500 notifications is one or two looks, not 500. After a look, the next waits as long
 * as it took: a service that names every flow changed at every answer gets at most half of the agent's time.
 */
export class ToldLooks {
  private waiting = new Map<string, string | null>();
  private looking: Promise<void> | null = null;

  constructor(private readonly port: ToldLooksPort) {}

  /** Flows written on the service, each with its aggregate there now (null: no files): looked at soon. */
  told(flows: Iterable<readonly [string, string | null]>): Promise<void> {
    for (const [flowPath, hash] of flows) this.waiting.set(flowPath, hash);
    return this.look();
  }

  /** Flows told about and not yet looked at. */
  get pending(): number {
    return this.waiting.size;
  }

  /** Nothing told is waiting or being looked at: the engine knows what the feed said. */
  get caughtUp(): boolean {
    return this.waiting.size === 0 && this.looking === null;
  }

  /** The engine rests again: what was told meanwhile is looked at now. */
  resting(): void {
    if (this.waiting.size > 0) void this.look();
  }

  /** Resolves once what was told so far is looked at (or kept for later, when the engine cannot look). */
  private look(): Promise<void> {
    if (this.looking) return this.looking;
    // Cleared once it ends (a microtask later, so also when nothing could be looked at and it ended at once).
    const looking = this.lookAtAll().finally(() => {
      if (this.looking === looking) this.looking = null;
    });
    this.looking = looking;
    return looking;
  }

  private async lookAtAll(): Promise<void> {
    while (this.waiting.size > 0 && this.port.canLook()) {
      const told = this.waiting;
      this.waiting = new Map();
      const started = performance.now();
      try {
        await this.port.check(told);
      } catch {
        // Not looked at (the service failed meanwhile): told again, for the next look.
        for (const [flowPath, hash] of told)
          if (!this.waiting.has(flowPath)) this.waiting.set(flowPath, hash);
        return;
      }
      const took = performance.now() - started;
      if (this.waiting.size > 0 && took > 10) await sleep(took);
    }
  }
}
