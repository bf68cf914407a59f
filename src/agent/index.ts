export {
  DEFAULT_SERVICE_URL,
  ConfigError,
  agentConfigSchema,
  configFilePath,
  loadConfig,
  saveConfig,
  type AgentConfig,
} from './config.ts';
