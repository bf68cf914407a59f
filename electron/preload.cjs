// Sandboxed preload: exposes window.flowsync (AgentApi over IPC) and nothing else. Plain CommonJS, because a
// sandboxed preload can require only 'electron'. The renderer turns { call, subscribe } into the typed AgentApi.
const { contextBridge, ipcRenderer } = require('electron');

contextBridge.exposeInMainWorld('flowsync', {
  call: (method, input) => ipcRenderer.invoke('agent:call', String(method), input),
  subscribe: (listener) => {
    const forward = (_event, agentEvent) => listener(agentEvent);
    ipcRenderer.on('agent:event', forward);
    return () => ipcRenderer.removeListener('agent:event', forward);
  },
});
