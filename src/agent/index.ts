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
export { configFilePath, defaultServiceDbPath, defaultStatePath } from './paths.ts';
export { identifyRepository, parseRemoteUrl, withRepository } from './repositories.ts';
export { Agent, type AgentOptions, type WatchedRepository } from './agent.ts';
export { readRepositoryStatuses, type RepositoryStatus } from './status.ts';
export { SECRET_NAMES, checkSecret } from './credentials.ts';
export { describeWarning } from './warnings.ts';
export * from './api/index.ts';
export * from './bridge/index.ts';
export { REPO_CONFIG_FILE, RepoConfigFilePublisher, readRepoConfigFile } from './repo-config-file.ts';
