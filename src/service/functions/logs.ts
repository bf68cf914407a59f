import { ActivityLogs } from '../store/activity-logs.ts';
import type { ServiceStores } from './stores.ts';
import type { Implementations } from './types.ts';

type LogPath = 'svc/swarm_api_key/private/add_activity' | 'svc/slug/public/log';

export function logFunctions({ db, apiKeys }: ServiceStores): Implementations<LogPath> {
  const logs = new ActivityLogs(db);
  return {
    'svc/swarm_api_key/private/add_activity': (args, ctx) =>
      db.transaction(() => {
        const id = logs.appendKeyActivity({ ...args, trace_id: ctx.traceId });
        // A key-created record is how a personal API key becomes known to the tracker actions (docs/architecture.md).
        const registered =
          args.payload.type === 'key-created' && apiKeys.register(args.api_key_tid, args.payload);
        return { id, registered };
      })(),

    'svc/slug/public/log': (args, ctx) => ({ id: logs.appendSlugEvent({ ...args, trace_id: ctx.traceId }) }),
  };
}
