// The desktop app's side of the agent: the handshake and the window's rules. Light on purpose (zod, node:fs and
// node:path only): Electron's main process imports this door, and has no use for the rest of the agent.
export {
  agentReadySchema,
  announceReady,
  readyMessage,
  waitForAgentReady,
  type AgentChild,
  type AgentReady,
} from './handshake.ts';
export { APP_PAGE_URL, APP_SCHEME, appFile, isAppPage, type SenderFrame } from './window-policy.ts';
