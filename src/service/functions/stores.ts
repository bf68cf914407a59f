import type { ServiceDatabase } from '../db/open.ts';
import type { HistoryRetention } from '../store/file-history.ts';
import type { ChangeFeed } from './change-feed.ts';

/** What every family of functions is built from: the database (SQLite or Postgres) and the history's retention. */
export interface ServiceStores {
  db: ServiceDatabase;
  /** How long and how much of the flows' history is kept. */
  retention: HistoryRetention;
  /** The calls to `changes` waiting for a write (one per service process). */
  feed: ChangeFeed;
  /**
   * Reads the list of members again now, after a change of it committed: resolved once this process refuses what
   * the change revoked (store/credentials.ts).
   */
  membersChanged: () => Promise<void>;
  /** Whether a member may renew their own token (`serve --no-self-renew` turns it off); true when left out. */
  selfRenew?: boolean;
}
