import { folderGone } from '../protocol/index.ts';
import type { RepoCounts, SyncState, SyncProgress, SyncStatus } from '../sync/index.ts';
import type { AgentConfig } from './config.ts';
import { currentBranch } from './git.ts';
import type { AbsentEntry, RepositoryEntry } from './repository-table.ts';
import type { PendingRename } from './rename.ts';
import { configuredRepository, pauseOf, type RepositoryIdentity } from './repositories.ts';

/**
 * What a window or a command may know of one repository, running or paused: the read model, so that nothing
 * outside the agent reads its state file or its table.
 */
export interface RepositoryDescription extends RepositoryIdentity {
  flowRoots: string[];
  /** The engine's status; null while not synced (another checkout is the source, or paused while not there). */
  status: SyncStatus | null;
  /** Whether its user paused it; since when (ISO), null when not paused or not known (paused by an older flowsync). */
  paused: boolean;
  pausedSince: string | null;
  counts: RepoCounts;
  /** The long work under way (hashing, uploading), if any. */
  progress: SyncProgress | null;
  lastSyncAt: string | null;
  /** Files on disk that are not sent, with the reason's code. */
  notSent: { flowPath: string; path: string; warning: string }[];
  /** What is wrong with the repository's `.flowsync/repo-config.json`, if anything (waits for its user). */
  configProblem: string | null;
  /** Why its valid `.flowsync/repo-config.json` is not on the service yet (sent at the next look); else null. */
  configNotSent: string | null;
  /** Flows the service refused as they are. */
  refused: { flowPath: string; message: string }[];
  /** Why a repository is not synced although enabled (another checkout is its source); null otherwise. */
  reason: string | null;
  /** The checkout its repository is synced from instead of this one; null when this one is (or none is). */
  syncedFrom: string | null;
  /** The branch the checkout is on (`main`, `detached at 1a2b3c4`); null outside a git repository. */
  branch: string | null;
  /** Its name changed (origin renamed) and waits for its user to sync under the new one; null otherwise. */
  rename: { to: string; message: string } | null;
  /** The other writers the service named for this repository (git's motions are held while there are any). */
  teammates: string[];
}

export const NO_COUNTS: RepoCounts = {
  flows: 0,
  files: 0,
  pending: 0,
  pendingFlows: 0,
  warnings: 0,
  rejected: 0,
  conflicts: 0,
  behind: 0,
};

/** What describing an entry reads besides it: the state's records of the repository (null: it never synced). */
export interface DescribeFacts {
  state: SyncState;
  repoId: number | null;
  config: AgentConfig;
}

/** A repository the agent knows, as a window or a command sees it. */
export function describeEntry(entry: RepositoryEntry, facts: DescribeFacts): RepositoryDescription {
  if (entry.kind === 'absent') return describeAbsent(entry, facts);
  const { state, repoId } = facts;
  const running = entry.kind === 'running' ? entry : null;
  const unwatched = entry.kind === 'unwatched' ? entry : null;
  const identity = running?.watched.identity ?? unwatched!;
  const status = running?.watched.engine.status() ?? null;
  return {
    root: identity.root,
    owner: identity.owner,
    name: identity.name,
    flowRoots: [...(running?.watched.engine.flowRoots ?? unwatched!.flowRoots)],
    status,
    counts: status?.counts ?? (repoId === null ? NO_COUNTS : state.counts(repoId)),
    progress: running?.progress ?? null,
    ...recorded(facts),
    configProblem: running?.configFile.problem ?? null,
    configNotSent: running?.configFile.unsent ?? null,
    reason: unwatched?.reason ?? null,
    syncedFrom: unwatched?.syncedFrom ?? null,
    ...pausedOf(identity.root, status, facts.config),
    branch: currentBranch(identity.root),
    rename: renameOf(entry.rename),
    teammates: repoId === null ? [] : state.gitHeld.sharedWith(repoId),
  };
}

/** What the state recorded of a repository's last rounds. */
function recorded({
  state,
  repoId,
}: DescribeFacts): Pick<RepositoryDescription, 'lastSyncAt' | 'notSent' | 'refused'> {
  if (repoId === null) return { lastSyncAt: null, notSent: [], refused: [] };
  return {
    lastSyncAt: state.repos().find((repo) => repo.id === repoId)?.lastSyncAt ?? null,
    notSent: state.warnings(repoId),
    refused: state.rejections(repoId).map(({ flowPath, message }) => ({ flowPath, message })),
  };
}

/** Whether its user paused a repository, from its engine, else from the config (not synced, paused). */
function pausedOf(
  root: string,
  status: SyncStatus | null,
  config: AgentConfig,
): { paused: boolean; pausedSince: string | null } {
  if (status) return { paused: status.paused, pausedSince: status.pausedSince };
  const pause = pauseOf(configuredRepository(config, root));
  return { paused: pause !== null, pausedSince: pause?.since ?? null };
}

/** A repository whose folder is not there: `missing`, with what the state knew of it from its last sync. */
function describeAbsent(absent: AbsentEntry, facts: DescribeFacts): RepositoryDescription {
  const { state, repoId } = facts;
  const counts = repoId === null ? NO_COUNTS : state.counts(repoId);
  return {
    root: absent.root,
    owner: absent.owner,
    name: absent.name,
    flowRoots: [...absent.flowRoots],
    status: {
      phase: 'missing',
      counts,
      message: absent.problem ?? folderGone(absent.root),
      retryAt: null,
      missed: 0,
      heldDeletions: 0,
      notInCheckout: 0,
      paused: false,
      pausedSince: null,
      nothingToSync: null,
      gitChanges: [],
    },
    paused: false,
    pausedSince: null,
    counts,
    progress: null,
    ...recorded(facts),
    configProblem: null,
    configNotSent: null,
    reason: null,
    syncedFrom: null,
    branch: null,
    rename: null,
    teammates: [],
  };
}

/** The rename waiting for a repository, as `acme/app2` and the line that says what to do; null: none. */
function renameOf(rename: PendingRename | undefined): RepositoryDescription['rename'] {
  return rename ? { to: `${rename.to.owner}/${rename.to.name}`, message: rename.message } : null;
}
