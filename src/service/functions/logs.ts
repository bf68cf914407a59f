import { ActivityLogs } from '../store/activity-logs.ts';
import { ApiKeys } from '../store/api-keys.ts';
import type { ServiceStores } from './stores.ts';
import type { Implementations } from './types.ts';

type LogPath = 'svc/swarm_api_key/private/add_activity' | 'svc/slug/public/log';

export function logFunctions({ db }: ServiceStores): Implementations<LogPath> {
  return {
    'svc/swarm_api_key/private/add_activity': (args, ctx) =>
      db.transaction(async (sql) => {
        const id = await new ActivityLogs(sql).appendKeyActivity({ ...args, trace_id: ctx.traceId });
        // A key-created record is how a personal API key becomes known to the tracker actions (docs/architecture.md).
        const registered =
          args.payload.type === 'key-created' &&
          (await new ApiKeys(sql).register(args.api_key_tid, args.payload));
        return { id, registered };
      }),

    'svc/slug/public/log': (args, ctx) =>
      db.transaction(async (sql) => ({
        id: await new ActivityLogs(sql).appendSlugEvent({ ...args, trace_id: ctx.traceId }),
      })),
  };
}
