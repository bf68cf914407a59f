import { existsSync } from 'node:fs';
import { SyncState, stateDamage, type RepoCounts } from '../sync/index.ts';
import { notice } from './notice.ts';
import { openState } from './open-state.ts';
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

/**
 * What the state file says of every repository: readable while an agent runs (WAL), and after it stopped. A
 * damaged file is rebuilt (moved aside, a new one made), except under a running agent that still has it open:
 * that agent rebuilds it when it starts again.
 */
export function readRepositoryStatuses(
  statePath = defaultStatePath(),
  { runningAgentPid = null }: { runningAgentPid?: number | null } = {},
): RepositoryStatus[] {
  if (!existsSync(statePath)) return [];
  if (runningAgentPid !== null) {
    const damage = stateDamage(statePath);
    if (damage !== null) {
      notice(
        `the state database could not be read (${damage}); the running agent (pid ${runningAgentPid}) ` +
          'rebuilds it when it is started again.',
      );
      return [];
    }
  }
  const state = runningAgentPid === null ? openState(statePath) : new SyncState(statePath);
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
