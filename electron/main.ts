// The desktop shell: glue only. The agent runs as `flowsync ui` outside this process and says where its bridge is
// with a ready message; this process shows the window, forwards AgentApi calls over IPC to that bridge, keeps a
// tray icon with the sync state, and notifies what waits for the user (followNeeds decides). The rules it applies
// live in src/window/desktop and src/protocol, where Node tests hold them.
import {
  app,
  BrowserWindow,
  dialog,
  ipcMain,
  Menu,
  nativeImage,
  net,
  Notification,
  protocol,
  session,
  Tray,
  utilityProcess,
} from 'electron';
import { spawn } from 'node:child_process';
import { fileURLToPath, pathToFileURL } from 'node:url';
import {
  AGENT_API,
  APP_PAGE_URL,
  APP_SCHEME,
  appFile,
  connectToBridge,
  followNeeds,
  isAppPage,
  rendererDir,
  replyError,
  replyValue,
  toAgentApiError,
  trayLine,
  waitForAgentReady,
  type AgentReady,
  type AgentStatus,
  type BridgeClient,
  type DesktopNotification,
} from '../src/window/index.ts';

const BIN = fileURLToPath(new URL('../bin/flowsync.js', import.meta.url));
const PRELOAD = fileURLToPath(new URL('./preload.cjs', import.meta.url));
const ICON = fileURLToPath(new URL('./resources/tray.png', import.meta.url));

let window: BrowserWindow | null = null;
let tray: Tray | null = null;
let stopAgent = () => {};
let quitting = false;

/**
 * The agent's heap bounded as `flowsync ui` bounds it from a terminal, which replaces itself with these flags where
 * it can, not when forked with an IPC channel as here (src/cli/main.ts says why each, docs/memory.md has the runs):
 * Electron 45 embeds Node 24, whose V8 otherwise grows the young generation to 128 MB and keeps it, and lets the
 * old generation grow 4-fold between collections.
 */
const AGENT_HEAP_FLAGS = ['--max-semi-space-size=8', '--heap-growing-percent=25'];
/** And malloc's blocks of 128 KiB or more given back when freed (src/cli/main.ts says why). */
const AGENT_ENV = { MALLOC_MMAP_THRESHOLD_: String(128 * 1024), ...process.env };

/**
 * Starts `flowsync ui` and waits for its ready message. Packaged: in Electron's utility process, with the native
 * modules electron-builder rebuilt for Electron and no ELECTRON_RUN_AS_NODE, so the RunAsNode fuse stays off. In
 * development: in plain Node with an IPC channel, since the repository's native modules are built for Node.
 */
function startAgent(): Promise<AgentReady> {
  if (app.isPackaged) {
    // stdout ignored: the handshake says all this process needs, and stdout would go to the session's journal.
    const child = utilityProcess.fork(BIN, ['ui'], {
      serviceName: 'flowsync agent',
      execArgv: AGENT_HEAP_FLAGS,
      env: AGENT_ENV,
      stdio: ['ignore', 'ignore', 'inherit'],
    });
    stopAgent = () => child.kill();
    return waitForAgentReady(child);
  }
  const child = spawn(process.env.FLOWSYNC_NODE ?? 'node', [...AGENT_HEAP_FLAGS, BIN, 'ui'], {
    stdio: ['ignore', 'ignore', 'inherit', 'ipc'],
    env: AGENT_ENV,
  });
  stopAgent = () => child.kill('SIGINT');
  return waitForAgentReady(child);
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
  void window.loadURL(APP_PAGE_URL);
  // Closing the window keeps the agent syncing; quit from the tray.
  window.on('close', (event) => {
    if (quitting) return;
    event.preventDefault();
    window?.hide();
  });
}

function trayLabel(status: AgentStatus): string {
  return trayLine(status);
}

/** Shown notifications, kept until they close: one no longer referenced may be collected with its click handler. */
const notifications = new Set<Notification>();

/** A state entered that waits for the user (followNeeds decides which, once each): a click opens the window. */
function notify(due: DesktopNotification): void {
  if (!Notification.isSupported()) return;
  const shown = new Notification({ title: due.title, body: due.body, icon: ICON });
  notifications.add(shown);
  shown.on('click', showWindow);
  shown.on('close', () => notifications.delete(shown));
  shown.show();
}

function serveIpc(bridge: BridgeClient): void {
  // One handler for every AgentApi method; the name is checked against the contract before anything is sent.
  ipcMain.handle('agent:call', async (event, method: string, input: unknown) => {
    const frame = event.senderFrame && { url: event.senderFrame.url, top: event.senderFrame.parent === null };
    if (!isAppPage(frame) || !Object.hasOwn(AGENT_API, method)) {
      return replyError({ code: 'refused', message: 'Not a flowsync window.' });
    }
    try {
      return replyValue(await bridge.call(method, input));
    } catch (error) {
      return replyError(toAgentApiError(error));
    }
  });
  const needs = followNeeds();
  bridge.subscribe((event) => {
    window?.webContents.send('agent:event', event);
    if (event.type !== 'status') return;
    tray?.setToolTip(trayLabel(event.status));
    for (const due of needs(event.status.repositories)) notify(due);
  });
}

// The page's own scheme, served from renderer/dist only (appFile), in place of file:// and its extra privileges.
protocol.registerSchemesAsPrivileged([{ scheme: APP_SCHEME, privileges: { standard: true, secure: true } }]);

if (!app.requestSingleInstanceLock()) {
  app.quit();
} else {
  app.on('second-instance', showWindow);
  app.on('web-contents-created', (_event, contents) => {
    contents.setWindowOpenHandler(() => ({ action: 'deny' }));
    // The page never leaves itself: no navigation (of the page or a frame), no redirect.
    contents.on('will-navigate', (event) => event.preventDefault());
    contents.on('will-frame-navigate', (event) => event.preventDefault());
    contents.on('will-redirect', (event) => event.preventDefault());
  });
  app.on('before-quit', () => {
    quitting = true;
    stopAgent();
  });
  app.on('window-all-closed', () => {
    // Stay in the tray.
  });
  void app.whenReady().then(async () => {
    // No permission is granted when asked for, nor reported as granted when checked.
    session.defaultSession.setPermissionRequestHandler((_contents, _permission, grant) => grant(false));
    session.defaultSession.setPermissionCheckHandler(() => false);
    protocol.handle(APP_SCHEME, (request) => {
      const file = appFile(request.url, rendererDir());
      return file ? net.fetch(pathToFileURL(file).href) : new Response('Not found', { status: 404 });
    });
    const ready = await startAgent().catch((error: Error) => {
      dialog.showErrorBox('flowsync could not start its agent', error.message);
      app.exit(1);
    });
    if (!ready) return;
    const bridge = connectToBridge(ready.url);
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
