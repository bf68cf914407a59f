import { existsSync } from 'node:fs';
import { SyncState, type RepoCounts } from '../sync/index.ts';
import { defaultStatePath } from './paths.ts';

export interface RepositoryStatus {
  root: string;
  service: string;
  owner: string;
  name: string;
  counts: RepoCounts;
  lastSyncAt: string | null;
  lastError: string | null;
  warnings: { flowPath: string; path: string; warning: string }[];
  rejected: { flowPath: string; message: string }[];
}

/** What the state file says of every repository: readable while an agent runs (WAL), and after it stopped. */
export function readRepositoryStatuses(statePath = defaultStatePath()): RepositoryStatus[] {
  if (!existsSync(statePath)) return [];
  const state = new SyncState(statePath);
  try {
    return state.repos().map((repo) => ({
      root: repo.root,
      service: repo.service,
      owner: repo.owner,
      name: repo.name,
      counts: state.counts(repo.id),
      lastSyncAt: repo.lastSyncAt,
      lastError: repo.lastError,
      warnings: state.warnings(repo.id),
      rejected: state.rejections(repo.id).map(({ flowPath, message }) => ({ flowPath, message })),
    }));
  } finally {
    state.close();
  }
}
