import { pathToFileURL } from 'node:url';

/**
 * The desktop window's rules, kept out of Electron so Node tests hold them; electron/main.ts applies them. The
 * window shows one page from disk and nothing else (main also refuses navigation, redirects, new windows and
 * every permission).
 */

/** The file:// address Electron's `loadFile(page)` gives the window's page. */
export function appPageUrl(pagePath: string): string {
  return pathToFileURL(pagePath).href;
}

/** The frame an IPC message comes from, as Electron's `event.senderFrame` describes it (null once it is gone). */
export interface SenderFrame {
  url: string;
  /** False for an iframe: only the page itself may call the agent. */
  top: boolean;
}

/**
 * True only for the app's own page, in the window's top frame: the exact address `loadFile` gave, not any file://
 * page (a file the user or a hostile link opened must not reach the agent). The fragment alone may differ: it
 * changes no document.
 */
export function isAppPage(frame: SenderFrame | null | undefined, pageUrl: string): boolean {
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
