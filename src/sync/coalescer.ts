/**
 * Gathers paths that changed and hands them over once things go quiet: after `quietMs` without a new change, or
 * `maxWaitMs` after the first one at the latest, so a long burst (a git checkout) still syncs as it goes.
 */
export class Coalescer {
  private readonly pending = new Set<string>();
  private quietTimer: NodeJS.Timeout | null = null;
  private deadline: NodeJS.Timeout | null = null;
  /** When the last change came: the quiet timer, when it fires early, waits out the rest. */
  private lastAt = 0;

  constructor(
    private readonly flush: (paths: Set<string>) => void,
    private readonly quietMs = 30,
    private readonly maxWaitMs = 500,
  ) {}

  /**
   * One change. No timer is moved per change: a storm of writes brings tens of thousands a second, and a
   * clearTimeout and setTimeout for each was a good share of the agent's CPU.
   */
  add(path: string): void {
    this.pending.add(path);
    this.lastAt = Date.now();
    this.quietTimer ??= setTimeout(() => this.quietEnded(), this.quietMs);
    this.deadline ??= setTimeout(() => this.fire(), this.maxWaitMs);
  }

  private quietEnded(): void {
    const quietFor = Date.now() - this.lastAt;
    if (quietFor >= this.quietMs) return this.fire();
    this.quietTimer = setTimeout(() => this.quietEnded(), this.quietMs - quietFor);
  }

  /** Whether no change waits to be handed over. */
  get idle(): boolean {
    return this.pending.size === 0;
  }

  /** Drops what is pending without flushing it (on stop). */
  clear(): void {
    this.reset();
    this.pending.clear();
  }

  private fire(): void {
    this.reset();
    if (this.pending.size === 0) return;
    const paths = new Set(this.pending);
    this.pending.clear();
    this.flush(paths);
  }

  private reset(): void {
    if (this.quietTimer) clearTimeout(this.quietTimer);
    if (this.deadline) clearTimeout(this.deadline);
    this.quietTimer = null;
    this.deadline = null;
  }
}
