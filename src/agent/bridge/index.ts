export { startBridge, type Bridge, type BridgeOptions } from './bridge.ts';
