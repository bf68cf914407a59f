import { reasonOf } from '../../client/index.ts';
import { whoWrote, type HistoryPurge } from '../../protocol/index.ts';
import { keptWhere } from '../../sync/index.ts';
import { AgentApiError, type AgentApi } from '../contract.ts';
import { located, type ApiHelpers } from './helpers.ts';

/** A file's versions on the service: listed, read, restored, or purged; refused by a service that keeps none. */
export function historyMethods({
  agent,
  repository,
  keepsHistory,
}: ApiHelpers): Pick<AgentApi, 'fileHistory' | 'purgeHistory' | 'versionContent' | 'restoreVersion'> {
  return {
    fileHistory: async ({ root, file }) => {
      const { engine } = repository(root);
      await keepsHistory();
      const { flowPath, path } = located(engine, file);
      const [versions, { purges, capped }] = await Promise.all([
        engine.service.history(flowPath, path),
        engine.service.historyNotes(flowPath, path),
      ]);
      return {
        flowPath,
        path,
        capped,
        versions: versions.map((v) => ({
          version: v.version,
          hash: v.hash,
          size: v.size,
          writtenAt: v.written_at,
          // Who wrote it by the one display rule: the member from the credential, then the client's label.
          writtenBy: whoWrote(v.member, v.written_by),
          current: v.current,
          conflictCopy: v.conflict_copy === true,
        })),
        purges: purges.map(purgeView),
      };
    },

    purgeHistory: async ({ root, file, version }) => {
      const { engine } = repository(root);
      await keepsHistory();
      const { flowPath, path } = located(engine, file);
      try {
        return {
          flowPath,
          path,
          purge: purgeView(await engine.service.purgeHistory(flowPath, path, version)),
        };
      } catch (error) {
        // A service that keeps history but has no purge (an older flowsync serve): its 404, in words.
        if (reasonOf(error) === 'unknown_function')
          throw new AgentApiError(
            'refused',
            `${agent.serviceUrl} cannot purge history (it has no purge_history, an extension of a newer \`flowsync serve\`): nothing was removed; upgrade the service, or its operator removes the versions there.`,
          );
        throw error;
      }
    },

    versionContent: async ({ root, file, version }) => {
      const { engine } = repository(root);
      await keepsHistory();
      const { flowPath, path } = located(engine, file);
      return { flowPath, path, version, ...(await engine.service.showVersion(flowPath, path, version)) };
    },

    restoreVersion: async ({ root, file, version }) => {
      const { engine } = repository(root);
      await keepsHistory();
      const { flowPath, path } = located(engine, file);
      const { deleted, outcome, service, kept } = await engine.service.restoreVersion(
        flowPath,
        path,
        version,
      );
      return {
        flowPath,
        path,
        version,
        deleted,
        outcome,
        serviceWrittenBy: service?.writtenBy ?? null,
        kept: kept === null ? null : keptWhere(kept),
      };
    },
  };
}

/** A purge's tombstone in the window's words. */
function purgeView(purge: HistoryPurge) {
  return {
    version: purge.version,
    versions: purge.versions,
    purgedAt: purge.purged_at,
    purgedBy:
      purge.purged_by_member === undefined
        ? purge.purged_by
        : whoWrote(purge.purged_by_member, purge.purged_by),
  };
}
