import { existsSync } from 'node:fs';
import type { RepoConfigCurrent } from '../protocol/index.ts';
import { RepoConfigBase, SyncState, damageOf, type RepoCounts } from '../sync/index.ts';
import { repoConfigConflictLine } from './repo-config-file.ts';
import { notice } from './notice.ts';
import { openState } from './open-state.ts';
import { defaultStatePath } from '../host/index.ts';
import { sameFolder } from './repositories.ts';
import { currentBranch } from './git.ts';

export interface RepositoryStatus {
  root: string;
  /** 'embedded' or the service's URL: the state keeps an outbox per repository and service. */
  service: string;
  /** Whether `service` is the one the agent uses now; the others are outboxes of services used before. */
  current: boolean;
  owner: string;
  name: string;
  /** The branch the checkout is on now (`main`, `detached at 1a2b3c4`); null outside a git repository. */
  branch: string | null;
  counts: RepoCounts;
  lastSyncAt: string | null;
  lastError: string | null;
  warnings: { flowPath: string; path: string; warning: string }[];
  rejected: { flowPath: string; message: string }[];
  /** Its service answered that it is one of the spec alone (no history, no bases): said once by `status`. */
  specAlone?: boolean;
  /** What keeps its `.flowsync/repo-config.json` from the service (a teammate's newer config), in one line; else null. */
  repoConfig?: string | null;
  /** Files newer on the service, untouched here (behind: a teammate's edits), with who wrote them. */
  newer?: { flowPath: string; path: string; writtenBy: string | null }[];
  /** Conflicts whose version the service no longer has (it went back in time: a restored backup). */
  lost?: number;
}

export interface StatusScope {
  /** The folders of the config file: a repository removed from it (in the window) is not listed. */
  folders: readonly string[];
  /** The state's name of the current service (serviceKeyOf). */
  service: string;
}

/**
 * What the state file says of each repository of the config, the current service's entry first: readable while an
 * agent runs (WAL), and after it stopped. A damaged file is rebuilt (moved aside, a new one made), except under a
 * running agent that still has it open: that agent rebuilds it when it starts again. Damage is found by reading:
 * the agent's start checks every page (quick_check), which at 100,000 files was the largest part of a `status`
 * (60-140 ms of its CPU); a file whose damage the reads here do not meet reads as it is. Opened as a
 * reader: the counts the agent kept at its last stop are used, not counted again (state-counts.ts).
 */
export function readRepositoryStatuses(
  scope: StatusScope,
  statePath = defaultStatePath(),
  { runningAgentPid = null }: { runningAgentPid?: number | null } = {},
): RepositoryStatus[] {
  if (!existsSync(statePath)) return [];
  try {
    return statusesIn(new SyncState(statePath, { reader: true }), scope);
  } catch (error) {
    const damage = damageOf(error);
    if (damage === null) throw error;
    if (runningAgentPid === null) return statusesIn(openState(statePath), scope);
    notice(
      `the state database could not be read (${damage}); the running agent (pid ${runningAgentPid}) ` +
        'rebuilds it when it is started again.',
    );
    return [];
  }
}

/** Each repository's status as `state` says it; `state` is closed after. */
function statusesIn(state: SyncState, scope: StatusScope): RepositoryStatus[] {
  try {
    const configured = state.repos().filter((repo) => scope.folders.some((f) => sameFolder(f, repo.root)));
    const current = (repo: { service: string }) => repo.service === scope.service;
    const ordered = [...configured.filter(current), ...configured.filter((repo) => !current(repo))];
    return ordered.map((repo) => ({
      root: repo.root,
      service: repo.service,
      current: current(repo),
      owner: repo.owner,
      name: repo.name,
      branch: currentBranch(repo.root),
      counts: state.counts(repo.id),
      lastSyncAt: repo.lastSyncAt,
      lastError: repo.lastError,
      warnings: state.warnings(repo.id),
      rejected: state.rejections(repo.id).map(({ flowPath, message }) => ({ flowPath, message })),
      specAlone: state.serviceSpecAlone(repo.id),
      repoConfig: repoConfigLine(new RepoConfigBase(state.db, repo.id).conflict()),
      newer: state.behind(repo.id).map(({ flowPath, path, writtenBy }) => ({ flowPath, path, writtenBy })),
      lost: state.conflicts(repo.id).filter((conflict) => conflict.lost).length,
    }));
  } finally {
    state.close();
  }
}

function repoConfigLine(conflict: RepoConfigCurrent | null): string | null {
  return conflict && repoConfigConflictLine(conflict);
}
