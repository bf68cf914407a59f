import { RepoConfigStore } from '../store/repo-configs.ts';
import type { ServiceStores } from './stores.ts';
import type { Implementations } from './types.ts';

export function repoConfigFunctions({ db }: ServiceStores): Implementations<'svc/repo_config/public/update'> {
  return {
    'svc/repo_config/public/update': ({ baggage: _baggage, owner, name, ...config }) =>
      db.transaction((sql) => new RepoConfigStore(sql).replace(owner, name, config)),
  };
}
