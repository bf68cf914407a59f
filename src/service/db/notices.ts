import type { Listening } from './sql.ts';

/**
 * The listeners of this process, by channel, and the notifications a transaction holds until it commits: what
 * `Sql.notify` and `ServiceDatabase.listen` share on both databases (Postgres adds other processes' through LISTEN).
 */
export class Notices {
  private readonly listeners = new Map<string, Set<() => void>>();

  /** Whether anyone of this process listens to `channel`. */
  has(channel: string): boolean {
    return (this.listeners.get(channel)?.size ?? 0) > 0;
  }

  channels(): string[] {
    return [...this.listeners.keys()].filter((channel) => this.has(channel));
  }

  /** Adds a listener; `heard` says whether other processes' notifications reach it now. */
  listen(channel: string, onNotify: () => void, heard: () => boolean): Listening {
    let listeners = this.listeners.get(channel);
    if (!listeners) this.listeners.set(channel, (listeners = new Set()));
    const listener = () => onNotify();
    listeners.add(listener);
    return {
      get heard() {
        return heard();
      },
      stop: () => listeners.delete(listener),
    };
  }

  /** Tells each listener of each channel, once per call; one listener's throw does not keep it from the others. */
  tell(channels: Iterable<string>): void {
    for (const channel of new Set(channels))
      for (const listener of [...(this.listeners.get(channel) ?? [])]) {
        try {
          listener();
        } catch {
          // A listener's own failure is its own: the notification is a poke, and the others still get it.
        }
      }
  }

  /** Everyone, as after a gap in what other processes' notifications reached (they read what they missed). */
  tellAll(): void {
    this.tell(this.listeners.keys());
  }
}

/**
 * The notifications of one transaction: told once it commits (`commit`), dropped when it rolls back. Outside a
 * transaction (`null`), told at once.
 */
export class HeldNotices {
  private readonly channels = new Set<string>();
  add(channel: string): void {
    this.channels.add(channel);
  }
  commit(notices: Notices): void {
    notices.tell(this.channels);
    this.channels.clear();
  }
}
