import { logUnexpected } from '../../host/index.ts';
import { unclaimedLine, unusable } from '../../agent/index.ts';
import { AgentApiError, type AgentApi } from '../contract.ts';
import { keepSecret, type ApiHelpers } from './helpers.ts';

/** Settings → the tracker's personal API key: kept and claimed, whose it is, and saying whose when nobody's. */
export function trackerKeyMethods({
  agent,
  apiKey,
  settings,
}: ApiHelpers): Pick<AgentApi, 'setApiKey' | 'setKeyOwner' | 'whoYouAre'> {
  return {
    setApiKey: async ({ secret }) => {
      // Kept first: a key the agent cannot keep is never registered with the service.
      await keepSecret(agent, 'api-key', secret);
      try {
        const claim = await agent.team.claimKey(secret);
        // Unknown to the service, and this agent may not register it: no use keeping it. A key that is nobody's
        // but that an operator may register (Settings lists whom) is kept for the user to say who they are.
        if (claim.outcome === 'unclaimed' && unusable(claim))
          throw new AgentApiError('refused', unclaimedLine(claim, agent.serviceUrl));
      } catch (error) {
        // Not usable after all: do not leave a key in the keychain that the service refuses.
        await agent.team
          .forgetSecret('api-key')
          .catch(logUnexpected('removing a tracker API key the service refused'));
        throw error;
      }
      return settings();
    },

    setKeyOwner: async ({ userId }) => {
      const { secret } = await apiKey();
      const users = await agent.team.trackerUsers();
      if (users === null)
        throw new AgentApiError(
          'refused',
          "Only an operator of the service can say whose key this is: sign in with an admin token first (or ask the service's operator).",
        );
      if (!users.some((user) => user.id === userId))
        throw new AgentApiError('not_found', `The tracker has no user ${userId}: pick one of the list.`);
      await agent.team.registerKey(secret, userId);
      return agent.team.keyOwner(secret);
    },

    whoYouAre: async () => {
      const { secret } = await agent.team.locateSecret('api-key');
      return secret === null ? null : agent.team.keyOwner(secret);
    },
  };
}
