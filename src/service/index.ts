import type { RunningService, ServiceOptions } from './create-service.ts';

export type { RunningService, ServiceOptions } from './create-service.ts';
export type { IssuedTokens } from './store/access-tokens.ts';
export { ensurePrivateFile, ensurePrivateFolder } from './private-files.ts';
export { connectionLimits, serverOptions, type ConnectionLimits } from './http/connection-limits.ts';
export { tunable } from './tunable.ts';
export {
  DEFAULT_LOG_MAX_BYTES,
  REPEATS_PER_SECOND,
  openLogFile,
  summingLog,
  type LogFile,
} from './log-file.ts';
export {
  describeStorageFault,
  folderFault,
  folderOf,
  storageFaultOf,
  storageFaultLine,
  storageFaultRemedy,
  type StorageFault,
} from './storage-fault.ts';
export { createExclusive, replaceFile, temporaryNameFor } from './exclusive-files.ts';

/**
 * Starts the service. Its HTTP server, stores and logger load only here: the sync layer imports this door for
 * the file-mode helpers, and loading the whole service with them cost `flowsync status` 120 to 190 ms
 * (measured).
 */
export async function createService(options: ServiceOptions): Promise<RunningService> {
  const { createService: start } = await import('./create-service.ts');
  return start(options);
}
