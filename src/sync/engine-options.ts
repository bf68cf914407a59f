import type { RemoteClient } from '../client/index.ts';
import type { Hasher } from './hasher.ts';
import type { SyncProgress, SyncRecovery, SyncReport, SyncMiss, SyncStatus } from './round-report.ts';
import type { DeletionGuard } from './safety.ts';
import type { SyncState } from './state.ts';
import type { FolderWatchBudget } from './watch-budget.ts';
import type { MemberOfService } from './reconcile.ts';
import type { GitPort } from './git-motions.ts';

export interface RepositorySpec {
  root: string;
  owner: string;
  name: string;
  /** Folders (relative to the root) whose subfolders are flows; default `flows`. */
  flowRoots: readonly string[];
  /** Who writes, as the service's history names this checkout (`dev@laptop:~/code/app`). */
  writer?: string;
  /**
   * The member the service knows this checkout's token by (from `whoami`, asked once per service and kept; null: a
   * service without members): a version is this checkout's own only if that member wrote it, and a read-only
   * member's checkout sends nothing.
   */
  member?: () => Promise<MemberOfService | null>;
  /** When a round's deletions are held for its user (default DEFAULT_DELETION_GUARD); null: never. */
  deletionGuard?: DeletionGuard | null;
  /**
   * What git's changes (a branch switch, `checkout --`, a reset…) do on a service others write to: `ask`
   * (default) holds them as one change set for their user; `send` sends them as a person's edits.
   */
  gitChanges?: 'ask' | 'send';
}

export interface SyncEngineOptions {
  repo: RepositorySpec;
  client: RemoteClient;
  state: SyncState;
  hasher: Hasher;
  /** Names the service the acknowledged state is for (its URL, or `embedded`). */
  serviceKey: string;
  quietMs?: number;
  maxWaitMs?: number;
  /** Back-off after an answer that says "not now" (5xx, 429, 401): doubled per failure, at most `retryMaxMs`. */
  retryBaseMs?: number;
  retryMaxMs?: number;
  /** While the service does not answer, a cheap probe every `probeMinMs`–`probeMaxMs` (default 2–4 s). */
  probeMinMs?: number;
  probeMaxMs?: number;
  /** How often to look for flow roots that appeared and for the repository folder itself. */
  presenceIntervalMs?: number;
  /**
   * How often every flow root is rescanned whatever the watcher said, ±20 % (default RESCAN_INTERVAL_MS); what a
   * rescan finds is sent and counted in `missed`.
   */
  rescanIntervalMs?: number;
  /** How often a watching engine looks at the service for what changed there, ±20 % (default SERVICE_CHECK_MS). */
  serviceCheckIntervalMs?: number;
  /**
   * Whether the agent's live feed is connected to the service now (a teammate's write is told at once): the quick
   * look every serviceCheckIntervalMs is then left out. Absent: never (a service of the spec alone).
   */
  live?: () => boolean;
  /** Starts paused (a repository its user paused before a restart): see pause(). */
  paused?: { since: string | null };
  /** The folders watched, shared with the other engines of the process (default: the process's own). */
  watchBudget?: FolderWatchBudget;
  /** What git left in the checkout's `.git`, for telling git's motions from a person's edits; none: not asked. */
  git?: GitPort;
}

export interface EngineEvents {
  status: [SyncStatus];
  progress: [SyncProgress];
  synced: [SyncReport];
  recovered: [SyncRecovery];
  missed: [SyncMiss];
  /** A periodic rescan ended: the owner of the engine looks again at what a rescan does not (the git remote). */
  rescanned: [];
}
