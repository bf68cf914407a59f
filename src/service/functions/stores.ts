import type { ServiceDatabase } from '../db/open.ts';
import type { HistoryRetention } from '../store/file-history.ts';

/** What every family of functions is built from: the database (SQLite or Postgres) and the history's retention. */
export interface ServiceStores {
  db: ServiceDatabase;
  /** How long and how much of the flows' history is kept. */
  retention: HistoryRetention;
  /**
   * Reads the list of members again now, after a change of it committed: resolved once this process refuses what
   * the change revoked (store/credentials.ts).
   */
  membersChanged: () => Promise<void>;
}
