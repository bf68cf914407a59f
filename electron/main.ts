// The desktop shell: glue only. The agent runs as `flowsync ui` in its own Node process (its native modules stay
// built for Node); this process shows its window, forwards AgentApi calls over IPC to the agent's loopback bridge,
// and keeps a tray icon with the sync state.
import { app, BrowserWindow, ipcMain, Menu, nativeImage, session, Tray } from 'electron';
import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { AGENT_API, toAgentApiError, type AgentStatus } from '../src/agent/api/index.ts';
import { connectToBridge, type BridgeClient } from '../src/agent/bridge/index.ts';

const BIN = fileURLToPath(new URL('../bin/flowsync.js', import.meta.url));
const PRELOAD = fileURLToPath(new URL('./preload.cjs', import.meta.url));
const PAGE = fileURLToPath(new URL('../renderer/dist/index.html', import.meta.url));
const ICON = fileURLToPath(new URL('./resources/tray.png', import.meta.url));

let window: BrowserWindow | null = null;
let tray: Tray | null = null;
let agent: ChildProcess | null = null;
let quitting = false;

/** Starts `flowsync ui` and reads the bridge address it prints. Packaged, Electron itself runs it as Node. */
function startAgent(): Promise<string> {
  const node = app.isPackaged ? process.execPath : (process.env.FLOWSYNC_NODE ?? 'node');
  agent = spawn(node, [BIN, 'ui'], {
    env: { ...process.env, ...(app.isPackaged && { ELECTRON_RUN_AS_NODE: '1' }) },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  return new Promise((resolve, reject) => {
    let out = '';
    agent!.once('exit', (code) => reject(new Error(`flowsync ui exited with ${code}: ${out}`)));
    agent!.stdout!.on('data', (chunk: Buffer) => {
      out += chunk.toString('utf8');
      const address = /Window: (\S+)/.exec(out)?.[1];
      if (address) resolve(address);
    });
  });
}

function showWindow(): void {
  if (window) {
    window.show();
    window.focus();
    return;
  }
  window = new BrowserWindow({
    width: 1100,
    height: 800,
    title: 'flowsync',
    webPreferences: { preload: PRELOAD, contextIsolation: true, sandbox: true, nodeIntegration: false },
  });
  void window.loadFile(PAGE);
  // Closing the window keeps the agent syncing; quit from the tray.
  window.on('close', (event) => {
    if (quitting) return;
    event.preventDefault();
    window?.hide();
  });
}

function trayLabel(status: AgentStatus): string {
  const pending = status.repositories.reduce((sum, repo) => sum + repo.counts.pending, 0);
  const trouble = status.repositories.find((repo) =>
    ['offline', 'unauthorized', 'missing'].includes(repo.phase),
  );
  if (trouble) return `flowsync: ${trouble.owner}/${trouble.name} ${trouble.phase}`;
  return pending > 0 ? `flowsync: ${pending} files pending` : 'flowsync: in sync';
}

function serveIpc(bridge: BridgeClient): void {
  // One handler for every AgentApi method; the name is checked against the contract before anything is sent.
  ipcMain.handle('agent:call', async (event, method: string, input: unknown) => {
    if (event.senderFrame?.url.startsWith('file://') !== true || !Object.hasOwn(AGENT_API, method)) {
      return { ok: false, error: { code: 'refused', message: 'Not a flowsync window.' } };
    }
    try {
      return { ok: true, value: await bridge.call(method, input) };
    } catch (error) {
      return { ok: false, error: toAgentApiError(error).toBody() };
    }
  });
  bridge.subscribe((event) => {
    window?.webContents.send('agent:event', event);
    if (event.type === 'status') tray?.setToolTip(trayLabel(event.status));
  });
}

if (!app.requestSingleInstanceLock()) {
  app.quit();
} else {
  app.on('second-instance', showWindow);
  app.on('web-contents-created', (_event, contents) => {
    contents.setWindowOpenHandler(() => ({ action: 'deny' }));
    contents.on('will-navigate', (event) => event.preventDefault());
  });
  app.on('before-quit', () => {
    quitting = true;
    agent?.kill('SIGINT');
  });
  app.on('window-all-closed', () => {
    // Stay in the tray.
  });
  void app.whenReady().then(async () => {
    session.defaultSession.setPermissionRequestHandler((_contents, _permission, grant) => grant(false));
    const bridge = connectToBridge(await startAgent());
    serveIpc(bridge);
    tray = new Tray(nativeImage.createFromPath(ICON));
    tray.setToolTip('flowsync');
    tray.setContextMenu(
      Menu.buildFromTemplate([
        { label: 'Open flowsync', click: showWindow },
        { label: 'Sync now', click: () => void bridge.call('syncNow', {}) },
        { type: 'separator' },
        { label: 'Quit', click: () => app.quit() },
      ]),
    );
    showWindow();
  });
}
