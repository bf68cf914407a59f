// Owns the agent's runtime: the Agent (config, secrets, the service embedded or remote, one client, one state,
// one sync engine per repository), repositories and git, credentials, and the one error classifier.
// May import: protocol, host, client, service, secrets, sync.
export {
  DEFAULT_SERVICE_PORT,
  DEFAULT_SERVICE_URL,
  ConfigError,
  agentConfigSchema,
  inspectConfig,
  loadConfig,
  saveConfig,
  type AgentConfig,
  type RepositoryConfig,
} from './config.ts';
export {
  configuredRepository,
  identifyRepository,
  parseRemoteUrl,
  pauseOf,
  withPausedRepository,
  withRepository,
} from './repositories.ts';
export { currentBranch, gitCommonDir, gitConfig, globalUserEmail, remoteUrl, userEmail } from './git.ts';
export {
  claimKey,
  distinctEmails,
  gitEmails,
  keyLineAtStart,
  keyOwnerView,
  registerKey,
  trackerUsers,
  unclaimedLine,
  unusable,
  type Claim,
  type KeyOwnerView,
} from './key-owner.ts';
export { pendingRename, type PendingRename } from './rename.ts';
export { type BranchSwitch } from './branch-follower.ts';
export { NotTheSource, sourceElsewhere, tilde } from './source.ts';
export { Agent } from './agent.ts';
export type { AgentOptions } from './agent-parts.ts';
export type { WatchedRepository } from './repository-table.ts';
export { readRepositoryStatuses, type RepositoryStatus } from './status.ts';
export { EMBEDDED_SERVICE, configuredServiceUrl, serviceKeyOf } from './service-key.ts';
export {
  SECRET_NAMES,
  SecretRefused,
  checkSecret,
  claimApiKey,
  deviceLabel,
  keepMemberTokens,
  redeemInvite,
} from './credentials.ts';
export {
  REPO_CONFIG_FILE,
  RepoConfigFileError,
  RepoConfigFilePublisher,
  readRepoConfigFile,
  repoConfigOnDisk,
  repoConfigProblem,
  repoConfigConflictLine,
  repoConfigHash,
  writeRepoConfigFile,
  type RepoConfigOnDisk,
  type RepoConfigSaved,
} from './repo-config-file.ts';
export { classifyError, type ClassifiedError, type Outcome } from './errors.ts';
export { checkRepositoryFolder, expandHome, folderNotThere } from './folder-check.ts';
export { AgentApiError, agentApiErrorSchema, type AgentApiErrorBody } from './api-error.ts';
export { RENEW_BEFORE_MS, TokenRenewal, renewalTime, type TokenFacts } from './token-renewal.ts';
