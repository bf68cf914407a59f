import { followNeeds, type DesktopNotification, type RepositoryNeeds } from '../../src/protocol/index.ts';

/**
 * The window's desktop notifications in a browser (the Notification API): asked for on the user's click in
 * Settings ("Notify me"), remembered in this address's storage, and shown for what desktopNotifications decides.
 * In the desktop app the main process shows them (Electron's own), so the page shows none there.
 */

const CHOICE_KEY = 'flowsync.notify';

/**
 * desktop: the desktop app notifies; unsupported: no Notification API here; blocked: the browser said no for this
 * page (only its site settings can undo it); on; off.
 */
export type NotifyState = 'desktop' | 'unsupported' | 'blocked' | 'on' | 'off';

export function notifyState(): NotifyState {
  if (window.flowsync) return 'desktop';
  if (typeof Notification === 'undefined') return 'unsupported';
  if (Notification.permission === 'denied') return 'blocked';
  return Notification.permission === 'granted' && localStorage.getItem(CHOICE_KEY) === 'on' ? 'on' : 'off';
}

/** Asks the browser (a prompt, on the user's click: browsers ignore the request otherwise) and remembers a yes. */
export async function notifyMe(): Promise<NotifyState> {
  if ((await Notification.requestPermission()) === 'granted') localStorage.setItem(CHOICE_KEY, 'on');
  return notifyState();
}

export function stopNotifying(): NotifyState {
  localStorage.removeItem(CHOICE_KEY);
  return notifyState();
}

/**
 * Follows the pushed statuses and shows a notification for each state entered (decided whether or not they are
 * on, so that turning them on later does not bring up old news). The tag is the state's: a second tab of the window
 * replaces the first one's notification instead of adding its own. `open` is called with the one clicked.
 */
export function statusNotifier(open: (notification: DesktopNotification) => void) {
  const follow = followNeeds();
  return (repositories: readonly RepositoryNeeds[]) => {
    const due = follow(repositories);
    if (notifyState() !== 'on') return;
    for (const notification of due) {
      const shown = new Notification(notification.title, { body: notification.body, tag: notification.key });
      shown.onclick = () => {
        window.focus();
        shown.close();
        open(notification);
      };
    }
  };
}

/** Where a clicked notification leads: the repository's "Waiting for you", its card, or the sign-in form. */
export function notificationTarget(notification: DesktopNotification): {
  tab: 'sync' | 'settings';
  id: string;
} {
  if (notification.root === null) return { tab: 'settings', id: 'token' };
  if (notification.need === 'folder-gone') return { tab: 'sync', id: repositoryId(notification.root) };
  return { tab: 'sync', id: waitingId(notification.root) };
}

/** The element ids a notification leads to (an id may hold any character but white space). */
export const repositoryId = (root: string) => `repository-${encodeURIComponent(root)}`;
export const waitingId = (root: string) => `waiting-${encodeURIComponent(root)}`;
