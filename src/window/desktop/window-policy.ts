import { realpathSync, statSync } from 'node:fs';
import { isAbsolute, join, relative } from 'node:path';

/**
 * The desktop window's rules, kept out of Electron so Node tests hold them; electron/main.ts applies them. The
 * window shows one page and nothing else (main also refuses navigation, redirects, new windows and every
 * permission). The page is served from the app's own scheme, not from file://: a file:// page gets privileges
 * (fetch of other files, service workers) that Electron's grantFileProtocolExtraPrivileges fuse now takes away.
 */

/** The scheme electron/main.ts registers (standard and secure) and serves renderer/dist from. */
export const APP_SCHEME = 'app';

/** The window's one page: the only address whose IPC calls are served. */
export const APP_PAGE_URL = `${APP_SCHEME}://flowsync/index.html`;

/** The frame an IPC message comes from, as Electron's `event.senderFrame` describes it (null once it is gone). */
export interface SenderFrame {
  url: string;
  /** False for an iframe: only the page itself may call the agent. */
  top: boolean;
}

/**
 * True only for the app's own page, in the window's top frame: exactly APP_PAGE_URL, not any other page of the
 * scheme, nor the same file opened from disk. The fragment alone may differ: it changes no document.
 */
export function isAppPage(frame: SenderFrame | null | undefined, pageUrl = APP_PAGE_URL): boolean {
  if (!frame?.top) return false;
  let sender: URL;
  try {
    sender = new URL(frame.url);
  } catch {
    return false;
  }
  sender.hash = '';
  return sender.href === pageUrl;
}

/**
 * The file of the renderer's folder an app:// request asks for (the page for `/`), or null: another host, a path
 * that leaves the folder (however it is spelled: dots, escaped slashes or backslashes, a link), a NUL byte, or a
 * file that is not there. electron/main.ts answers null with 404.
 */
export function appFile(requestUrl: string, rendererDir: string): string | null {
  let url: URL;
  let path: string;
  try {
    url = new URL(requestUrl);
    path = decodeURIComponent(url.pathname);
  } catch {
    return null;
  }
  if (url.protocol !== `${APP_SCHEME}:` || url.host !== 'flowsync') return null;
  if (path.includes('\0') || path.includes('\\')) return null;
  try {
    const root = realpathSync(rendererDir);
    const file = realpathSync(join(root, path === '/' ? 'index.html' : path));
    const inside = relative(root, file);
    const contained = inside !== '' && !inside.startsWith('..') && !isAbsolute(inside);
    return contained && statSync(file).isFile() ? file : null;
  } catch {
    return null;
  }
}
