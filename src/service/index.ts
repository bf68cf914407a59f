export { createService, type RunningService, type ServiceOptions } from './create-service.ts';
export type { IssuedTokens } from './store/access-tokens.ts';
