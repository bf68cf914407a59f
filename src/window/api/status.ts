import { lookView } from '../../sync/index.ts';
import type { AgentApi } from '../contract.ts';
import { flowFiles, repositoryDetail } from '../status-view.ts';
import type { ApiHelpers } from './helpers.ts';

/** What the agent is doing and has done: its status, a round or a look now, a repository's files, Recent activity. */
export function statusMethods({
  agent,
  activity,
  repository,
  status,
}: ApiHelpers): Pick<
  AgentApi,
  'status' | 'syncNow' | 'lookNow' | 'repositoryDetail' | 'flowFiles' | 'activity'
> {
  return {
    status: async () => status(),

    syncNow: async ({ root }) => {
      if (root) repository(root);
      await agent.syncNow(root);
      return status();
    },

    lookNow: async ({ root }) => {
      if (root) repository(root);
      const looks = await agent.lookNow(root);
      return { ...status(), looks: looks.map(({ watched, look }) => lookView(watched.identity.root, look)) };
    },

    repositoryDetail: async ({ root }) => repositoryDetail(agent, root),

    flowFiles: async ({ root, flowPath }) => flowFiles(agent, root, flowPath),

    activity: async () => ({ entries: activity.list() }),
  };
}
