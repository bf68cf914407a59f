import { RemoteError } from '../../client/index.ts';
import { tokenPasteProblem, type WhoamiValue } from '../../protocol/index.ts';
import { KeychainUnavailable, SECRET_ENV_VARS } from '../../secrets/index.ts';
import { AgentApiError, deviceLabel, redeemInvite } from '../../agent/index.ts';
import type { AgentApi, MemberView } from '../contract.ts';
import type { ApiHelpers } from './helpers.ts';

/**
 * Settings → Service: who you are on a team's service, and joining it with an invite, as
 * `flowsync whoami` and `flowsync login --invite` do in a terminal.
 */
export function membershipMethods({ agent }: ApiHelpers): Pick<AgentApi, 'joinWithInvite' | 'whoAmI'> {
  return {
    joinWithInvite: async ({ invite, label }) => {
      if (agent.embedded)
        throw new AgentApiError(
          'invalid_input',
          "The embedded service is this agent's own: an invite is for a team's service. Set its URL above first, then restart the agent.",
        );
      const problem = tokenPasteProblem(invite, 'invite');
      if (problem)
        throw new AgentApiError('invalid_input', problem, [{ path: ['invite'], message: problem }]);
      // An invite works once: a keychain that cannot take the token must be found before it is spent.
      if ((await agent.team.locateSecret('access-token')).source === 'unavailable')
        throw new AgentApiError(
          'refused',
          `No OS keychain is reachable to keep your token, and an invite works once: redeem it in a terminal with \`flowsync login --invite --print-token\` and set ${SECRET_ENV_VARS['access-token']} in the agent's environment.`,
        );
      // What the token is for, in `member list`: this machine's name unless the window gave one.
      const device = deviceLabel(label);
      const value = await redeemInvite(agent.serviceUrl, invite, device);
      try {
        await agent.team.keepJoinTokens(value);
      } catch (error) {
        if (!(error instanceof KeychainUnavailable)) throw error;
        throw new AgentApiError(
          'refused',
          'The OS keychain went away before your token could be kept: ask your operator for a new invite (this one is used).',
        );
      }
      return {
        member: value.member,
        role: value.role,
        shared: false,
        token: value.token_id,
        label: device,
        expiresAt: value.expires_at,
      };
    },

    whoAmI: async () => {
      let value: WhoamiValue;
      try {
        value = await agent.team.whoami();
      } catch (error) {
        // No members there (404), or no token the service takes (401): nobody to name; Settings says how to join.
        if (error instanceof RemoteError && (error.statusCode === 404 || error.statusCode === 401))
          return null;
        throw error;
      }
      return memberView(value);
    },
  };
}

function memberView(value: WhoamiValue): MemberView {
  const { member, role, shared, token, label, expires_at } = value;
  return { member, role, shared, token, label, expiresAt: expires_at };
}
