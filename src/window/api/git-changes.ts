import { changeSetWords } from '../../protocol/index.ts';
import type { AgentApi } from '../contract.ts';
import type { ApiHelpers } from './helpers.ts';

/** Git's change sets held for their user (a branch switch, a reset): listed, then sent to the team or kept here. */
export function gitChangeMethods({
  activity,
  repository,
  sending,
}: ApiHelpers): Pick<AgentApi, 'heldGitChanges' | 'settleGitChanges'> {
  return {
    heldGitChanges: async ({ root }) => {
      const { engine } = repository(root);
      return { sets: engine.motions.heldSets(), teammates: engine.motions.teammates };
    },

    settleGitChanges: async ({ root, choice, name }) => {
      const watched = choice === 'send' ? sending(root) : repository(root);
      const { engine } = watched;
      const sets =
        choice === 'send' ? await engine.sendGitChanges(name ?? null) : engine.keepGitChanges(name ?? null);
      for (const set of sets)
        activity.record(watched, {
          kind: 'settled',
          flowPath: null,
          path: null,
          message: `${changeSetWords(set)} ${choice === 'send' ? 'sent to the team' : 'kept here, not sent'}, on your word`,
        });
      return {
        sets: sets.map(({ name, changed, deleted }) => ({ name, changed, deleted })),
        teammates: engine.motions.teammates,
      };
    },
  };
}
