export {
  SyncEngine,
  failureOutcome,
  probeAnswered,
  type RepositorySpec,
  type SyncEngineOptions,
  type SyncPhase,
  type SyncProgress,
  type SyncRecovery,
  type SyncReport,
  type SyncStatus,
} from './engine.ts';
export type { FileChange } from './uploader.ts';
export { Hasher } from './hasher.ts';
export { SyncState, type FileState, type RepoCounts, type RepoRecord } from './state.ts';
export { asideName, openSyncState, stateDamage, type OpenedState } from './state-file.ts';
export { FlowLayout } from './flow-layout.ts';
// The one containment rule, for what the agent reads or writes in a repository besides flows (its config file).
export { notRealFolder, readContained } from './contained-fs.mjs';
export { writeContained, type NotContained } from './contained-write.ts';
export { IgnoreRules, boundedPatterns } from './ignore-rules.ts';
export { FolderWatchBudget, watchedFolderCap } from './watch-budget.ts';
// The engine's parts, each with its own unit tests.
export { Coalescer } from './coalescer.ts';
export { FlowRetries } from './flow-retries.ts';
export { planUploads, plansKey, type FlowPlan } from './planner.ts';
export {
  DEFAULT_TIMINGS,
  retryDelayMs,
  Scheduler,
  type RoundOutcome,
  type SchedulerHooks,
  type SchedulerTimings,
} from './scheduler.ts';
export {
  chunkPlans,
  listingOverCap,
  isSingleUpdate,
  MAX_BATCH_BYTES,
  MAX_FLOWS_PER_BATCH,
  refusalOf,
  runInLanes,
  sendWithBisection,
} from './uploader.ts';
