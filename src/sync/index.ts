// Owns syncing one repository with a service: scanner, hasher (a worker pool), watcher (chokidar), the state (the
// outbox), planner, uploader and the SyncEngine that joins them. May import: protocol, host, client.
export { SyncEngine } from './engine.ts';
export type { RepositorySpec, SyncEngineOptions } from './engine-options.ts';
export type { SyncPhase } from './engine-status.ts';
export type {
  PlannedFlow,
  SyncMiss,
  SyncProgress,
  SyncRecovery,
  SyncReport,
  SyncStatus,
} from './round-report.ts';
export { DEFAULT_DELETION_GUARD, type DeletionGuard } from './safety.ts';
export type { MemberOfService } from './reconcile.ts';
export type { GitPort } from './git-motions.ts';
export type { GitTrail } from './git-motion.ts';
export type { GitChangeSet } from './state-motions.ts';
export type {
  ConflictComparison,
  KeptFile,
  NewerFile,
  NotWrittenFile,
  SeenFile,
  SeenNewer,
  ServiceSide,
  TakenFile,
} from './service-side.ts';
export { DeletionsNotConfirmed } from './service-side.ts';
export { keptWhere } from './conflict-copy.ts';
export { SERVICE_CHECK_MS } from './lookout.ts';
export {
  LOOK_WAIT_MS,
  lookView,
  needsFreshLook,
  type FreshLook,
  type LastLook,
  type LookSaid,
} from './fresh-look.ts';
export { newerClearedLine, type NewerCleared } from './newer-cleared.ts';
export { behindLine, gitChangesLine, lostMessage, wentBackLine } from './engine-status.ts';
export type { FileChange } from './uploader.ts';
export { VersionNotOfFile, type SideDiff } from './file-history.ts';
export { Hasher } from './hasher.ts';
export { flowRootProblem, normalFlowRoot } from './flow-layout.ts';
export { nothingToSync } from './presence.ts';
export { SyncState } from './state.ts';
export { RepoConfigBase } from './repo-config-base.ts';
export type { FileConflict, FileState, RepoCounts, RepoRecord } from './state-records.ts';
export {
  asideName,
  openSyncState,
  recordedSource,
  snapshotState,
  stateDamage,
  damageOf,
  type OpenedState,
} from './state-file.ts';
// The one containment rule, for what the agent reads or writes in a repository besides flows (its config file).
export { notRealFolder, readContained } from './contained-fs.mjs';
export { NotWritten, writeContained, type NotContained } from './contained-write.ts';
export { SHARE_OF_USER_WATCHES, watchLimit, watchLimitFor, type WatchLimit } from './watch-budget.ts';
export { surveyFlowRoots, type FlowRootSurvey } from './watch-needs.ts';
