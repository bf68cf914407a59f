import { useQuery } from '@tanstack/react-query';
import type { ActivityEntry, AgentApi } from '../../../src/window/index.ts';
import { folderGone, warnedPath } from '../../../src/protocol/index.ts';
import { plural } from '../plural.ts';
import { ErrorLine } from './common.tsx';

/** The agent's last 200 events, newest first; App keeps the list fresh from the pushed events. */
export function RecentActivity({ api }: { api: AgentApi }) {
  const activity = useQuery({ queryKey: ['activity'], queryFn: () => api.activity({}) });
  const entries = activity.data?.entries ?? [];
  return (
    <section aria-labelledby="activity-title" className="activity">
      <h3 id="activity-title">Recent activity</h3>
      <ErrorLine error={activity.error} />
      {activity.isSuccess && entries.length === 0 && <p className="muted">Nothing has happened yet.</p>}
      {entries.length > 0 && (
        <ol aria-labelledby="activity-title" tabIndex={0}>
          {entries.map((entry) => (
            <li
              key={entry.id}
              className={
                entry.kind === 'refused' ||
                entry.kind === 'offline' ||
                entry.kind === 'unavailable' ||
                entry.kind === 'signed-out' ||
                entry.kind === 'conflict' ||
                entry.kind === 'conflict-here'
                  ? 'error'
                  : ''
              }
            >
              <time dateTime={entry.at} className="muted">
                {new Date(entry.at).toLocaleTimeString()}
              </time>{' '}
              {describe(entry)} <span className="muted">({entry.repository})</span>
            </li>
          ))}
        </ol>
      )}
    </section>
  );
}

function describe(entry: ActivityEntry): string {
  const file = `${entry.flowPath}/${entry.path}`;
  switch (entry.kind) {
    case 'created':
      return `Sent new file ${file}`;
    case 'updated':
      return `Sent changes to ${file}`;
    case 'deleted':
      return `Deleted ${file} on the service`;
    case 'sent': {
      const counts = entry.counts ?? { flows: 0, created: 0, updated: 0, deleted: 0 };
      return `Sent ${entry.message ?? plural(counts.flows, 'flow')}: ${counts.created} new, ${counts.updated} changed, ${counts.deleted} deleted`;
    }
    case 'refused':
      return `The service refused ${entry.flowPath}: ${entry.message}`;
    case 'conflict':
      return `Conflict: ${file} changed on the service${entry.message ? ` by ${entry.message}` : ''} since this checkout synced it: not sent`;
    case 'skipped':
      return entry.flowPath === null || entry.path === null
        ? `Not sent: ${entry.message}`
        : `Not sent: ${warnedPath({ flowPath: entry.flowPath, path: entry.path })}: ${entry.message}`;
    case 'offline':
      return `Offline: ${entry.message ?? 'the service cannot be reached'}`;
    case 'unavailable':
      return `Service unavailable: ${entry.message ?? 'the service answers, but cannot take changes now'}`;
    case 'signed-out':
      return `Signed out: ${entry.message ?? 'the service no longer takes your token'}`;
    case 'online':
      return 'Back online: syncing again';
    case 'missing':
      return `Folder missing: ${entry.message ?? folderGone(entry.repository)}`;
    case 'paused':
      return 'Paused: changes are counted and sent when you resume';
    case 'resumed':
      return `Resumed: ${entry.message ?? 'syncing again'}`;
    case 'settled':
      return entry.flowPath === null ? `Settled: ${entry.message}` : `Settled ${file}: ${entry.message}`;
    case 'held':
      return `Held: ${entry.message}`;
    case 'conflict-here':
      return `Conflict: ${file} changed here and on the service${entry.message ? ` (by ${entry.message})` : ''}: not sent until you choose`;
    case 'taken':
      return entry.flowPath === null ? `Taken: ${entry.message}` : `Taken ${file}: ${entry.message}`;
  }
}
