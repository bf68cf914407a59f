export {
  DEFAULT_SERVICE_PORT,
  DEFAULT_SERVICE_URL,
  ConfigError,
  agentConfigSchema,
  loadConfig,
  saveConfig,
  type AgentConfig,
  type RepositoryConfig,
} from './config.ts';
export {
  configFilePath,
  defaultLockPath,
  defaultServiceDbPath,
  defaultStatePath,
  rendererDir,
} from './paths.ts';
export { identifyRepository, parseRemoteUrl, withRepository } from './repositories.ts';
export {
  AgentLock,
  claimAgentLock,
  findRunningAgent,
  TAKEOVER_STALE_MS,
  type AgentLockOwner,
} from './agent-lock.ts';
export { Agent, type AgentOptions, type WatchedRepository } from './agent.ts';
export type { FileChange, Round } from './activity.ts';
export { readRepositoryStatuses, type RepositoryStatus } from './status.ts';
export { EMBEDDED_SERVICE, configuredServiceUrl, serviceKeyOf } from './service-key.ts';
export { SECRET_NAMES, checkSecret } from './credentials.ts';
export * from './api/index.ts';
export * from './bridge/index.ts';
export {
  REPO_CONFIG_FILE,
  RepoConfigFileError,
  RepoConfigFilePublisher,
  readRepoConfigFile,
  writeRepoConfigFile,
} from './repo-config-file.ts';
export { classifyError, type ClassifiedError, type Outcome } from './errors.ts';
export { MAX_LOG_BYTES, agentLog, agentLogPath, reportIncident } from './agent-log.ts';
export { checkRepositoryFolder, expandHome } from './folder-check.ts';
export { dataFolderFault } from './data-folder.ts';
export * from './desktop/index.ts';
export {
  autostartEntry,
  autostartKind,
  autostartState,
  disableAutostart,
  enableAutostart,
  type AutostartEntry,
  type AutostartKind,
} from './autostart.ts';
export { agentCommand } from './start-at-login.ts';
