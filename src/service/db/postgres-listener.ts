import pg from 'pg';
import type { Notices } from './notices.ts';

/** Waits between attempts to open the listening connection again: from the first, doubled, up to the last. */
const RECONNECT_FIRST_MS = 250;
const RECONNECT_MAX_MS = 5_000;

/**
 * The one connection of a service process that LISTENs to its database's channels, so that a transaction another
 * process commits pokes this process's listeners (a teammate's write reaches the agents connected here). Opened at
 * the first listener, and again after it drops (Postgres restarted, the connection ended), with a back-off; while
 * it is down `heard` is false (listeners look for themselves), and when it is back every listener is poked once,
 * for what it missed meanwhile. Notifications are pokes: they carry nothing a listener must not miss.
 */
export class PostgresListener {
  private client: pg.Client | null = null;
  private connecting = false;
  private listening = new Set<string>();
  private wait = RECONNECT_FIRST_MS;
  private timer: NodeJS.Timeout | null = null;
  private closed = false;
  heard = false;

  constructor(
    private readonly url: string,
    private readonly notices: Notices,
    private readonly onError: (error: Error) => void,
  ) {}

  /** Listens to `channel` too (connecting first if need be). */
  add(channel: string): void {
    if (this.closed) return;
    if (this.client && this.heard && !this.listening.has(channel)) {
      this.listening.add(channel);
      this.client.query(`LISTEN ${quoted(channel)}`).catch((error: Error) => this.dropped(error));
      return;
    }
    if (!this.client && !this.connecting && !this.timer) void this.connect();
  }

  private async connect(): Promise<void> {
    this.timer = null;
    if (this.closed) return;
    this.connecting = true;
    const client = new pg.Client({ connectionString: this.url, application_name: 'flowsync listen' });
    client.on('error', (error) => this.dropped(error));
    client.on('end', () => this.dropped(null));
    client.on('notification', (message) => this.notices.tell([message.channel]));
    try {
      await client.connect();
      const channels = this.notices.channels();
      for (const channel of channels) await client.query(`LISTEN ${quoted(channel)}`);
      if (this.closed) {
        await client.end().catch(() => undefined);
        return;
      }
      this.client = client;
      this.listening = new Set(channels);
      this.heard = true;
      this.wait = RECONNECT_FIRST_MS;
      // What other processes committed while nobody here listened: each listener reads it now.
      this.notices.tellAll();
    } catch (error) {
      client.removeAllListeners('end');
      await client.end().catch(() => undefined);
      this.retryLater(error as Error);
    } finally {
      this.connecting = false;
    }
  }

  private dropped(error: Error | null): void {
    if (this.client === null) return;
    const client = this.client;
    this.client = null;
    this.heard = false;
    client.removeAllListeners('end');
    void client.end().catch(() => undefined);
    this.retryLater(error);
  }

  private retryLater(error: Error | null): void {
    if (this.closed || this.timer) return;
    if (error) this.onError(error);
    this.timer = setTimeout(() => void this.connect(), this.wait);
    this.timer.unref();
    this.wait = Math.min(this.wait * 2, RECONNECT_MAX_MS);
  }

  async close(): Promise<void> {
    this.closed = true;
    this.heard = false;
    if (this.timer) clearTimeout(this.timer);
    const client = this.client;
    this.client = null;
    if (client) {
      client.removeAllListeners('end');
      await client.end().catch(() => undefined);
    }
  }
}

/** A channel as an identifier: our channels are fixed words, quoted all the same. */
function quoted(channel: string): string {
  return `"${channel.replace(/"/g, '""')}"`;
}
