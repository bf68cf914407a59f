// Owns what every window sees: the AgentApi contract (zod) and its implementation over the agent's read model,
// the status view, activity, my tasks, the loopback bridge (server and client), the desktop handshake and policy.
// May import: protocol, host, client, secrets, sync (types), agent. electron/ and the renderer import only this.
export * from './contract.ts';
export { createAgentApi, toAgentApiError } from './implementation.ts';
export { statusEvents } from './events.ts';
export { trayLine } from './status-view.ts';
export { ACTIVITY_LIMIT, ActivityLog, activityOf, type FileChange, type Round } from './activity.ts';
export { startBridge, type Bridge, type BridgeOptions } from './bridge/bridge.ts';
export {
  AgentNotAnswering,
  bridgeAnswers,
  connectToBridge,
  type BridgeClient,
  type BridgeClientOptions,
} from './bridge/bridge-client.ts';
export {
  agentReadySchema,
  announceReady,
  readyMessage,
  waitForAgentReady,
  type AgentChild,
  type AgentReady,
} from './desktop/handshake.ts';
export { APP_PAGE_URL, APP_SCHEME, appFile, isAppPage, type SenderFrame } from './desktop/window-policy.ts';
// What the desktop shell needs of the host and the protocol, so that it imports this door alone.
export { rendererDir } from '../host/index.ts';
export { followNeeds, type DesktopNotification } from '../protocol/index.ts';
