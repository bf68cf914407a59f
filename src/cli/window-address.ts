import { spawn } from 'node:child_process';
import { UsageError } from './usage-error.ts';

/**
 * The `Window:` line, after opening the window in the browser when asked to. A launch address opens the window once; it is printed only to a terminal, for the person in
 * front of it. Anything else (a pipe, a file, the journal behind an autostart entry or the desktop app) gets the
 * address without a token, and `flowsync ui --open` opens the window from there.
 */
export async function showWindow(
  address: string,
  launchUrl: () => Promise<string> | string,
  open: boolean,
): Promise<string> {
  if (open) {
    await openInBrowser(await launchUrl());
    return `Window: ${address} (opened in your browser)`;
  }
  if (process.stdout.isTTY) return `Window: ${await launchUrl()}`;
  return `Window: ${address} (\`flowsync ui --open\` opens it)`;
}

/**
 * Opens a launch address in the user's browser: `$BROWSER` when set (the convention xdg-utils, Python's
 * webbrowser and git follow; the tests set it to a script that records the address), else the OS opener. The
 * address is in the opener's arguments, which other users of the machine can read in /proc while it runs: the
 * launch token is single-use and the page trades it at once, so a copy read there is a race the page usually wins
 * and worth nothing after.
 */
export function openInBrowser(url: string): Promise<void> {
  const browser = process.env.BROWSER?.split(':')[0];
  const [command, args] = browser
    ? [browser, [url]]
    : process.platform === 'darwin'
      ? ['open', [url]]
      : process.platform === 'win32'
        ? ['cmd', ['/c', 'start', '""', url.replaceAll('&', '^&')]]
        : ['xdg-open', [url]];
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { stdio: 'ignore', detached: true });
    child.once('error', () =>
      reject(new UsageError(`Could not run ${command} to open the window: set $BROWSER.`)),
    );
    child.once('spawn', () => {
      child.unref();
      resolve();
    });
  });
}
