import type { Listening, ServiceDatabase } from '../db/open.ts';
import { ChangeStore } from '../store/changes.ts';
import { HISTORY_CHANNEL } from '../store/file-history.ts';

/** While notifications of other processes are not heard (Postgres's listening connection down), the feed looks this often. */
const LOOK_WHILE_DEAF_MS = 1_000;

interface Waiter {
  keys: ReadonlySet<string>;
  done(): void;
}

/**
 * The calls to `changes` waiting for a write, woken by one read of what changed, however many wait: a write is
 * notified (db.notify, and LISTEN from other processes on Postgres), the feed reads which repositories were written
 * after the newest version it saw, and wakes the calls that watch one of them; each then reads its own answer. A
 * thousand agents waiting cost one small read per write, not a thousand.
 */
export class ChangeFeed {
  /** The newest history version the feed has read past (null until a call first waits). */
  private seen: number | null = null;
  private readonly waiters = new Set<Waiter>();
  private listening: Listening | null = null;
  private reading = false;
  private readAgain = false;
  private looking: NodeJS.Timeout | null = null;
  private closed = false;

  constructor(private readonly db: ServiceDatabase) {}

  /** Calls waiting now (the bench's count of held agents). */
  get waiting(): number {
    return this.waiters.size;
  }

  /**
   * Resolves once a flow of one of these repositories (repoKey) is written after history version `after` (the
   * newest the caller read), after `ms`, or when the service closes: the caller then reads what changed itself.
   * False once the service closes: the caller answers at once with what it has.
   */
  async wait(keys: ReadonlySet<string>, after: number, ms: number): Promise<boolean> {
    await this.waitOpen(keys, after, ms);
    return !this.closed;
  }

  private waitOpen(keys: ReadonlySet<string>, after: number, ms: number): Promise<void> {
    if (this.closed) return Promise.resolve();
    this.listen();
    // A write the feed read after the caller's own read: the caller reads again at once.
    if (this.seen !== null && this.seen > after) return Promise.resolve();
    this.seen ??= after;
    return new Promise((resolve) => {
      const waiter: Waiter = {
        keys,
        done: () => {
          clearTimeout(timer);
          this.waiters.delete(waiter);
          resolve();
        },
      };
      const timer = setTimeout(waiter.done, ms);
      this.waiters.add(waiter);
    });
  }

  /** Wakes every waiting call (the service is closing: each answers "nothing yet", and its agent calls again). */
  close(): void {
    this.closed = true;
    this.listening?.stop();
    if (this.looking) clearInterval(this.looking);
    for (const waiter of [...this.waiters]) waiter.done();
  }

  private listen(): void {
    if (this.listening) return;
    this.listening = this.db.listen(HISTORY_CHANNEL, () => void this.read());
    // Deaf to other processes (Postgres's LISTEN connection being opened again): read on a beat meanwhile.
    this.looking = setInterval(() => {
      if (this.waiters.size > 0 && this.listening?.heard === false) void this.read();
    }, LOOK_WHILE_DEAF_MS);
    this.looking.unref();
  }

  /** One read at a time; notifications during it make one more read after it. */
  private async read(): Promise<void> {
    if (this.reading) {
      this.readAgain = true;
      return;
    }
    if (this.waiters.size === 0 || this.seen === null) {
      // Nobody waits: the next waiter's own read covers what was written meanwhile.
      this.seen = null;
      return;
    }
    this.reading = true;
    try {
      do {
        this.readAgain = false;
        const { keys, newest } = await this.db.read((sql) => new ChangeStore(sql).changedRepos(this.seen!));
        this.seen = newest;
        if (keys.size === 0) continue;
        for (const waiter of [...this.waiters])
          if ([...waiter.keys].some((key) => keys.has(key))) waiter.done();
      } while (this.readAgain && this.waiters.size > 0);
    } catch {
      // The database did not answer (restarting): the waiting calls end at their time and read for themselves.
    } finally {
      this.reading = false;
    }
  }
}
