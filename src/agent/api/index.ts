export * from './contract.ts';
export { createAgentApi, toAgentApiError } from './implementation.ts';
export { statusEvents } from './events.ts';
