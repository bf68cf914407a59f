// @ts-check: type-checked with main.ts (JSDoc types), though it stays plain JavaScript.
// Sandboxed preload: exposes window.flowsync (AgentApi over IPC) and nothing else. Plain CommonJS, because a
// sandboxed preload can require only 'electron'. The renderer turns { call, subscribe } into the typed AgentApi.
const { contextBridge, ipcRenderer } = require('electron');

contextBridge.exposeInMainWorld('flowsync', {
  /** @type {(method: string, input: unknown) => Promise<unknown>} */
  call: (method, input) => ipcRenderer.invoke('agent:call', String(method), input),
  /** @type {(listener: (agentEvent: unknown) => void) => () => void} */
  subscribe: (listener) => {
    /** @type {(event: import('electron').IpcRendererEvent, agentEvent: unknown) => void} */
    const forward = (_event, agentEvent) => listener(agentEvent);
    ipcRenderer.on('agent:event', forward);
    return () => ipcRenderer.removeListener('agent:event', forward);
  },
});
