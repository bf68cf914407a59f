export { startBridge, type Bridge, type BridgeOptions } from './bridge.ts';
export { connectToBridge, type BridgeClient } from './bridge-client.ts';
