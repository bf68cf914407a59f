import { AgentApiError, type AgentApi } from '../contract.ts';
import { keptViews, withDisk, type ApiHelpers } from './helpers.ts';
import { settledEntries, takenEntries } from './activity-entries.ts';

/**
 * Conflicts and the team's newer versions: listed, compared, settled one way or the other (with where a copy of
 * the side not taken was kept), or taken.
 */
export function conflictMethods({
  agent,
  activity,
  repository,
  sending,
}: ApiHelpers): Pick<AgentApi, 'conflicts' | 'takeNewer' | 'resolveConflicts' | 'compareConflict'> {
  return {
    conflicts: async ({ root }) => {
      const { identity, engine } = repository(root);
      return {
        root: identity.root,
        conflicts: agent.conflicts(identity.root).map(withDisk),
        heldDeletions: engine.status().heldDeletions,
        newer: engine.service.newer().map(withDisk),
      };
    },

    takeNewer: async ({ root, confirmed, files }) => {
      const watched = sending(root);
      const result = await watched.engine.service.takeNewer({
        ...(confirmed !== undefined && { confirmed }),
        ...(files !== undefined && { seen: files }),
      });
      takenEntries(activity, watched, result.taken);
      return result;
    },

    resolveConflicts: async ({ root, side, files }) => {
      const watched = sending(root);
      const settled = await watched.engine.service.resolve(files ?? null, side);
      const kept = keptViews(settled.kept);
      settledEntries(
        activity,
        watched,
        settled.resolved,
        kept,
        side === 'mine' ? "yours is sent on top of the service's" : "the service's version is on disk",
      );
      return { ...settled, kept };
    },

    compareConflict: async ({ root, flowPath, path }) => {
      const { engine } = repository(root);
      const compared = await engine.service.compare(flowPath, path);
      if (!compared)
        throw new AgentApiError('not_found', `${flowPath}/${path} is not in conflict (settled already?).`);
      return { flowPath, path, ...compared };
    },
  };
}
