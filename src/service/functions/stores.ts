import type { ServiceDatabase } from '../db/open.ts';
import type { ApiKeys } from '../store/api-keys.ts';

/** What every family of functions is built from; each family prepares its own statements once. */
export interface ServiceStores {
  db: ServiceDatabase;
  apiKeys: ApiKeys;
}
