export {
  SyncEngine,
  type RepositorySpec,
  type SyncEngineOptions,
  type SyncPhase,
  type SyncProgress,
  type SyncReport,
  type SyncStatus,
} from './engine.ts';
export { Hasher, MAX_FILE_BYTES } from './hasher.ts';
export { SyncState, type RepoCounts, type RepoRecord } from './state.ts';
export { asideName, openSyncState, stateDamage, type OpenedState } from './state-file.ts';
export { FlowLayout } from './flow-layout.ts';
export { IgnoreRules } from './ignore-rules.ts';
