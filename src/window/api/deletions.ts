import { plural } from '../../protocol/index.ts';
import { DeletionsNotConfirmed } from '../../sync/index.ts';
import { AgentApiError, type AgentApi } from '../contract.ts';
import { keptViews, type ApiHelpers } from './helpers.ts';
import { settledEntries } from './activity-entries.ts';

/**
 * Deletions that wait for their user's word: those held by the guard, and the service's files not in this
 * checkout. Each is sent (deleted on the service) or put back on disk from the service's copy.
 */
export function deletionMethods({
  activity,
  repository,
  sending,
  listsItsFiles,
}: ApiHelpers): Pick<AgentApi, 'settleDeletions' | 'notInCheckout' | 'settleNotInCheckout'> {
  return {
    settleDeletions: async ({ root, choice }) => {
      if (choice === 'restore') {
        const watched = repository(root);
        const back = await watched.engine.service.restoreDeleted();
        const kept = keptViews(back.kept);
        activity.record(watched, {
          kind: 'settled',
          flowPath: null,
          path: null,
          message: `${plural(back.restored, 'file')} whose deletion was held put back on disk from the service's copy`,
        });
        settledEntries(activity, watched, [], kept, '');
        return { deleted: 0, ...back, kept };
      }
      const watched = sending(root);
      const deleted = await watched.engine.sendHeldDeletions();
      activity.record(watched, {
        kind: 'settled',
        flowPath: null,
        path: null,
        message: `${plural(deleted, 'held deletion')} sent to the service, on your word`,
      });
      return { deleted, restored: 0, notWritten: [], kept: [] };
    },

    notInCheckout: async ({ root }) => {
      const { identity, engine } = repository(root);
      await listsItsFiles();
      const files = await engine.service.filesNotInCheckout();
      return {
        root: identity.root,
        files: files.map(({ flowPath, path, hash, writtenBy, writtenAt }) => ({
          flowPath,
          path,
          hash,
          writtenBy,
          writtenAt,
        })),
      };
    },

    settleNotInCheckout: async ({ root, choice, files, confirmed }) => {
      const watched = choice === 'restore' ? repository(root) : sending(root);
      const { engine } = watched;
      await listsItsFiles();
      if (choice === 'restore') {
        const written = await engine.service.restoreNotInCheckout(files);
        activity.record(watched, {
          kind: 'settled',
          flowPath: null,
          path: null,
          message: `${plural(written.restored, 'file')} on the service not in this checkout written to disk from the service's copy`,
        });
        return { deleted: 0, ...written };
      }
      if (files === undefined)
        throw new AgentApiError(
          'invalid_input',
          'Name the files to delete on the service, as they were listed (`notInCheckout`): nothing is deleted unseen.',
        );
      // The deletions go by the held-deletion guard's allowance, which would send the held ones along.
      const held = engine.status().heldDeletions;
      if (held > 0)
        throw new AgentApiError(
          'refused',
          `${held} deletions are held in ${root}: settle them first (Delete them on the service, or Restore them on disk), then these.`,
        );
      let deleted: number;
      try {
        deleted = await engine.service.deleteNotInCheckout(files, confirmed === true);
      } catch (error) {
        if (error instanceof DeletionsNotConfirmed) throw new AgentApiError('refused', error.message);
        throw error;
      }
      const named = files.length <= 20 ? `: ${files.map((f) => `${f.flowPath}/${f.path}`).join(', ')}` : '';
      activity.record(watched, {
        kind: 'settled',
        flowPath: null,
        path: null,
        message: `${plural(deleted, 'file')} not in this checkout deleted on the service, on your word${named}`,
      });
      return { deleted, restored: 0, skipped: [] };
    },
  };
}
