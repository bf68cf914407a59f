// The desktop app's side of the agent: the handshake and the window's rules. Light on purpose (zod and node:url
// only): Electron's main process imports this door, and has no use for the rest of the agent.
export {
  agentReadySchema,
  announceReady,
  readyMessage,
  waitForAgentReady,
  type AgentChild,
  type AgentReady,
} from './handshake.ts';
export { appPageUrl, isAppPage, type SenderFrame } from './window-policy.ts';
