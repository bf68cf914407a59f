export * from './contract.ts';
export { createAgentApi, toAgentApiError, REPO_CONFIG_FILE } from './implementation.ts';
export { statusEvents } from './events.ts';
