import { CHANGES_PAGE_MAX } from '../../protocol/index.ts';
import { ChangeStore, repoKey } from '../store/changes.ts';
import { changeCursor, readCursor } from './change-cursor.ts';
import type { ServiceStores } from './stores.ts';
import type { Implementations } from './types.ts';

/**
 * `changes`, the feed of a live team: the flows of the caller's repositories written after its cursor, at once when
 * there are any, else when one is written (the feed wakes the call) or after `wait_ms` with none.
 */
export function liveFunctions({
  db,
  retention,
  feed,
}: ServiceStores): Implementations<'svc/flow_def/public/changes'> {
  return {
    'svc/flow_def/public/changes': async (args) => {
      const deadline = Date.now() + (args.wait_ms ?? 0);
      const keys = new Set(args.repos.map((repo) => repoKey(repo.repo_owner, repo.repo_name)));
      const first = await db.read((sql) => new ChangeStore(sql).newest());
      const from = readCursor(args.after, { newest: first, retentionDays: retention.days }, Date.now());
      if ('gap' in from)
        return { cursor: changeCursor(first, Date.now()), gap: true, changes: [], more: false };
      let closing = false;
      for (;;) {
        // The newest version before the changes are read: everything up to it is in what they return.
        const { newest, found } = await db.read(async (sql) => {
          const store = new ChangeStore(sql);
          const newest = await store.newest();
          return { newest, found: await store.since(args.repos, from.version, CHANGES_PAGE_MAX) };
        });
        const left: number = closing ? 0 : deadline - Date.now();
        if (found.changes.length > 0 || left <= 0) {
          const through = found.more ? found.through! : Math.max(newest, found.through ?? 0);
          return {
            cursor: changeCursor(through, Date.now()),
            gap: false,
            changes: found.changes,
            more: found.more,
          };
        }
        from.version = Math.max(from.version, newest);
        closing = !(await feed.wait(keys, newest, left));
      }
    },
  };
}
