// Owns what one user's OS gives the agent and the service: paths, private files (0600 in a 0700 folder: the only
// place those modes are written), log files, storage faults, the agent lock, the agent's log, start at login.
// May import: nothing of ours (protocol is not needed here); node, env-paths, pino, zod.
export {
  configFilePath,
  defaultAgentLogPath,
  defaultDataFolder,
  defaultLockPath,
  defaultServeLogPath,
  defaultServiceDbPath,
  defaultStatePath,
  rendererDir,
  tilde,
} from './paths.ts';
export {
  ensurePrivateFile,
  ensurePrivateFolder,
  looseModes,
  openPrivateExclusive,
  type LooseMode,
} from './private-files.ts';
export { MAX_SOCKET_PATH, inPrivateFolder, privateSocketPlace, type SocketPlace } from './private-socket.ts';
export { createExclusive, replaceFile, temporaryNameFor } from './exclusive-files.ts';
export { tunable } from './tunable.ts';
export { keepMemoryLow, type MemoryKeeper } from './memory-keeper.ts';
export {
  DEFAULT_LOG_MAX_BYTES,
  REPEATS_PER_SECOND,
  openLogFile,
  summingLog,
  type LogFile,
  type LogFileOptions,
} from './log-file.ts';
export {
  describeStorageFault,
  folderFault,
  folderOf,
  storageFaultLine,
  storageFaultOf,
  storageFaultRemedy,
  type StorageFault,
} from './storage-fault.ts';
export { dataFolderFault } from './data-folder.ts';
export {
  AgentLock,
  TAKEOVER_STALE_MS,
  claimAgentLock,
  findRunningAgent,
  readAgentLock,
  type LockReading,
  type AgentBridgeAddress,
  type AgentLockOwner,
  type BridgeAnswers,
} from './agent-lock.ts';
export {
  MAX_LOG_BYTES,
  agentLog,
  agentLogPath,
  logUnexpected,
  reportIncident,
  type Incident,
} from './agent-log.ts';
export { INCIDENT_ID, newIncidentId } from './incident.ts';
export {
  autostartEntry,
  autostartKind,
  autostartState,
  disableAutostart,
  enableAutostart,
  systemdQuote,
  type AutostartEntry,
  type AutostartKind,
  type AutostartPlace,
} from './autostart.ts';
export { agentCommand, setStartAtLogin, startAtLogin, type StartAtLogin } from './start-at-login.ts';
