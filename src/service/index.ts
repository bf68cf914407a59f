// Owns the embedded service: the HTTP server (fastify) and the SQLite store (better-sqlite3) of the 20 functions.
// May import: protocol, host, client.
export { createService, type RunningService, type ServiceOptions } from './create-service.ts';
export type { IssuedTokens } from './store/access-tokens.ts';
export { connectionLimits, serverOptions, type ConnectionLimits } from './http/connection-limits.ts';
export {
  exportService,
  importService,
  TransferRefused,
  type TransferProgress,
  type TransferSummary,
} from './transfer/index.ts';
