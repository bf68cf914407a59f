import { NotTheSource } from '../../agent/index.ts';
import type { AgentApi } from '../contract.ts';
import type { ApiHelpers } from './helpers.ts';

/** Adding, removing, pausing and resuming a repository, and what it syncs: its card after each. */
export function repositoryMethods({
  agent,
  view,
}: ApiHelpers): Pick<
  AgentApi,
  'addRepository' | 'removeRepository' | 'setRepositorySettings' | 'pauseRepository' | 'resumeRepository'
> {
  return {
    addRepository: async ({ path, source, rename }) => {
      try {
        const added = await agent.addAndStart(path, { source: source === true, rename: rename === true });
        return view(added.identity.root);
      } catch (error) {
        // Another checkout is its source: listed now, its card says so and offers "Sync from this checkout
        // instead" (the window showed the CLI's command in a red line, and no card).
        if (error instanceof NotTheSource) return view(error.identity.root);
        throw error;
      }
    },

    removeRepository: async ({ root }) => ({ removed: await agent.remove(root) }),

    setRepositorySettings: async ({ root, flowRoots, owner, name }) => {
      await agent.setRepositorySettings(root, {
        flowRoots,
        owner: owner === '' ? null : owner,
        name: name === '' ? null : name,
      });
      return view(root);
    },

    pauseRepository: async ({ root }) => {
      view(root);
      await agent.pause(root);
      return view(root);
    },

    resumeRepository: async ({ root }) => {
      view(root);
      await agent.resume(root);
      return view(root);
    },
  };
}
