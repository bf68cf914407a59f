import { useQueryClient } from '@tanstack/react-query';
import { useEffect, useState, type KeyboardEvent } from 'react';
import type { ActivityEntry } from '../../src/window/index.ts';
import type { Connection, WindowBridge } from './api.ts';
import { notificationTarget, statusNotifier } from './notifications.ts';
import { RepoConfigScreen } from './screens/RepoConfigScreen.tsx';
import { SettingsScreen } from './screens/SettingsScreen.tsx';
import { SyncScreen } from './screens/SyncScreen.tsx';
import { TasksScreen } from './screens/TasksScreen.tsx';

/** As many as the agent keeps (src/window/activity.ts). */
const ACTIVITY_LIMIT = 200;

const SCREENS = [
  { id: 'sync', label: 'Sync', Screen: SyncScreen },
  { id: 'tasks', label: 'Tasks', Screen: TasksScreen },
  { id: 'config', label: 'Repo config', Screen: RepoConfigScreen },
  { id: 'settings', label: 'Settings', Screen: SettingsScreen },
] as const;

export function App({ bridge }: { bridge: WindowBridge }) {
  const [current, setCurrent] = useState(0);
  const [connection, setConnection] = useState<Connection>('up');
  const queries = useQueryClient();
  // A clicked notification's element, focused once its tab shows it.
  const [focusing, setFocusing] = useState<string | null>(null);
  const [notify] = useState(() =>
    statusNotifier((notification) => {
      const target = notificationTarget(notification);
      setCurrent(SCREENS.findIndex((screen) => screen.id === target.tab));
      setFocusing(target.id);
    }),
  );
  useEffect(() => {
    if (focusing === null) return;
    setFocusing(null);
    const element = document.getElementById(focusing);
    element?.scrollIntoView({ block: 'center' });
    element?.focus();
  }, [focusing]);

  // An agent that stopped is said over the whole window at once, and every control is out of reach (inert) until
  // it is back; then everything shown is read again, since the events sent meanwhile were missed.
  useEffect(
    () =>
      bridge.watchConnection?.((state) => {
        setConnection(state);
        if (state === 'up') void queries.invalidateQueries();
      }),
    [bridge, queries],
  );

  // Pushed status replaces the cached one, and pushed activity joins the list: the Sync screen follows the agent
  // without polling. Every change that adds an activity entry is followed by a status push, which also reloads
  // the list: a transport that carries only status (or a stream that reconnected and missed some) stays whole.
  useEffect(
    () =>
      bridge.subscribe((event) => {
        if (event.type === 'status') {
          queries.setQueryData(['status'], event.status);
          notify(event.status.repositories);
          void queries.invalidateQueries({ queryKey: ['activity'] });
        } else {
          queries.setQueryData(['activity'], (list: { entries: ActivityEntry[] } | undefined) => ({
            entries: [event.entry, ...(list?.entries ?? []).filter((e) => e.id !== event.entry.id)].slice(
              0,
              ACTIVITY_LIMIT,
            ),
          }));
        }
      }),
    [bridge, queries, notify],
  );

  // Arrow keys move between tabs, as in any tab list.
  const onKeyDown = (event: KeyboardEvent) => {
    const step = event.key === 'ArrowRight' ? 1 : event.key === 'ArrowLeft' ? -1 : 0;
    if (step === 0) return;
    const next = (current + step + SCREENS.length) % SCREENS.length;
    setCurrent(next);
    document.getElementById(`tab-${SCREENS[next]!.id}`)?.focus();
  };

  const { Screen, id } = SCREENS[current]!;
  return (
    <>
      <div className="app" inert={connection !== 'up'}>
        <header>
          <h1>flowsync</h1>
          <nav role="tablist" aria-label="Screens" onKeyDown={onKeyDown}>
            {SCREENS.map((screen, index) => (
              <button
                key={screen.id}
                id={`tab-${screen.id}`}
                role="tab"
                aria-selected={index === current}
                aria-controls={`panel-${screen.id}`}
                tabIndex={index === current ? 0 : -1}
                onClick={() => setCurrent(index)}
              >
                {screen.label}
              </button>
            ))}
          </nav>
        </header>
        {/* The main landmark holds the tab panel: a <main> given role="tabpanel" would stop being a landmark. */}
        <main className="screen">
          <div id={`panel-${id}`} role="tabpanel" aria-labelledby={`tab-${id}`}>
            <Screen api={bridge.api} />
          </div>
        </main>
      </div>
      {connection !== 'up' && <AgentGone ended={connection === 'ended'} />}
    </>
  );
}

/** Over the whole window while its agent is gone (or refused this window's session). */
function AgentGone({ ended }: { ended: boolean }) {
  return (
    <div className="agent-gone">
      <div role="alert" className="agent-gone-card">
        {ended ? (
          <>
            <h2>This window's session has ended</h2>
            <p>
              The flowsync agent no longer knows this window (each run of the agent has its own address).{' '}
              <code>flowsync ui --open</code> opens a new one.
            </p>
          </>
        ) : (
          <>
            <h2>flowsync agent stopped</h2>
            <p>
              This window belongs to the run of the agent that stopped; each run has an address of its own.
              Once the agent runs again (<code>flowsync ui</code> or <code>flowsync start</code>),{' '}
              <code>flowsync ui --open</code> opens its window. Nothing pending is lost: the agent sends it
              when it starts.
            </p>
          </>
        )}
      </div>
    </div>
  );
}
