// Owns the service: the HTTP server (fastify) and the store of the 20 functions, on SQLite (better-sqlite3) or Postgres (pg).
// May import: protocol, host, client.
export {
  createService,
  TEAM_MAX_CONNECTIONS,
  type RunningService,
  type ServiceOptions,
} from './create-service.ts';
export type { IssuedTokens } from './store/access-tokens.ts';
export {
  capConnections,
  connectionLimits,
  serverOptions,
  type ConnectionLimits,
} from './http/connection-limits.ts';
export { DatabaseProblem } from './errors.ts';
export {
  exportService,
  importService,
  TransferRefused,
  type TransferProgress,
  type TransferSummary,
} from './transfer/index.ts';
export { callMembersOnDatabase, localActor, type LocalMembersPath } from './members-local.ts';
export { memberRateFromEnv } from './http/member-limits.ts';
