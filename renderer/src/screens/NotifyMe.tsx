import { useState } from 'react';
import { notifyMe, notifyState, stopNotifying, type NotifyState } from '../notifications.ts';

const WHEN =
  "when something waits for you (a conflict, deletions held, a repository's folder gone, signed out); never for a sync";

const SAID: Record<NotifyState, string> = {
  desktop: `The desktop app notifies you ${WHEN}.`,
  unsupported:
    'This browser shows no desktop notifications; the Sync screen and the tray say what waits for you.',
  blocked: `This browser blocks notifications from this page: allow them in its site settings to be notified ${WHEN}.`,
  on: `On: a notification ${WHEN}.`,
  off: `Off. Notify me shows a notification ${WHEN}.`,
};

/** Settings' desktop notifications: the browser is asked on this click only, never at load. */
export function NotifyMe() {
  const [state, setState] = useState(notifyState);
  const [asking, setAsking] = useState(false);
  const ask = () => {
    setAsking(true);
    void notifyMe()
      .then(setState)
      .finally(() => setAsking(false));
  };
  return (
    <section aria-labelledby="notify-title">
      <h3 id="notify-title">Desktop notifications</h3>
      <p className="muted" data-testid="notify-state">
        {SAID[state]}
      </p>
      {state === 'off' && (
        <button type="button" onClick={ask} disabled={asking}>
          Notify me
        </button>
      )}
      {state === 'on' && (
        <button type="button" onClick={() => setState(stopNotifying())}>
          Stop notifying
        </button>
      )}
    </section>
  );
}
