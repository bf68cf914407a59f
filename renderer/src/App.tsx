import { useQueryClient } from '@tanstack/react-query';
import { useEffect, useState, type KeyboardEvent } from 'react';
import type { ActivityEntry } from '../../src/window/index.ts';
import type { WindowBridge } from './api.ts';
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
  const queries = useQueryClient();

  // Pushed status replaces the cached one, and pushed activity joins the list: the Sync screen follows the agent
  // without polling. Every change that adds an activity entry is followed by a status push, which also reloads
  // the list: a transport that carries only status (or a stream that reconnected and missed some) stays whole.
  useEffect(
    () =>
      bridge.subscribe((event) => {
        if (event.type === 'status') {
          queries.setQueryData(['status'], event.status);
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
    [bridge, queries],
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
    <div className="app">
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
  );
}
