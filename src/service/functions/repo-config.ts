import { repoConfigOverCap, type RepoConfigCurrent } from '../../protocol/index.ts';
import { CallRefused } from '../errors.ts';
import { RepoConfigStore } from '../store/repo-configs.ts';
import type { ServiceStores } from './stores.ts';
import type { Implementations } from './types.ts';

export function repoConfigFunctions({ db }: ServiceStores): Implementations<'svc/repo_config/public/update'> {
  return {
    'svc/repo_config/public/update': async (
      { baggage: _baggage, owner, name, base_hash: base, ...config },
      ctx,
    ) => {
      // Capped like a flow file (the agent reads no more of the file): a larger one is refused, stored nowhere.
      const over = repoConfigOverCap(config);
      if (over !== null)
        throw new CallRefused(`The repository config ${over}: nothing was written.`, { path: [] });
      const written = await db.transaction((sql) =>
        new RepoConfigStore(sql).replace(
          owner,
          name,
          config,
          { name: ctx.writer, memberId: ctx.member?.memberId ?? null },
          base,
        ),
      );
      if ('conflict' in written) throw conflictRefusal(written.conflict as RepoConfigCurrent);
      return written;
    },
  };
}

/** A config written on a stale base, refused (422) with the service's config in `errorData`, who wrote it and when. */
function conflictRefusal(current: RepoConfigCurrent): CallRefused {
  const who = current.written_by ? ` by ${current.written_by}` : '';
  return new CallRefused(
    `The config of ${current.owner}/${current.name} changed on the service${who} at ${current.updated_at} since the one this write is based on: nothing was written.`,
    { reason: 'conflict', repo_config: current },
  );
}
