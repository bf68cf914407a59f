import type { ServiceDatabase } from '../db/open.ts';
import type { ApiKeys } from '../store/api-keys.ts';
import type { HistoryRetention } from '../store/file-history.ts';

/** What every family of functions is built from; each family prepares its own statements once. */
export interface ServiceStores {
  db: ServiceDatabase;
  apiKeys: ApiKeys;
  /** How long and how much of the flows' history is kept. */
  retention: HistoryRetention;
}
