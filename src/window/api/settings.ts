import { normalizeServiceUrl } from '../../secrets/index.ts';
import { checkSecret } from '../../agent/index.ts';
import { setStartAtLogin, startAtLogin } from '../../host/index.ts';
import { AgentApiError, type AgentApi } from '../contract.ts';
import { keepSecret, type ApiHelpers } from './helpers.ts';

/** Settings: the service's URL, signing in and out with a token, and starting at login. */
export function settingsMethods({
  agent,
  settings,
}: ApiHelpers): Pick<
  AgentApi,
  'getSettings' | 'saveSettings' | 'signIn' | 'signOut' | 'getStartAtLogin' | 'setStartAtLogin'
> {
  return {
    getSettings: settings,

    saveSettings: async ({ serviceUrl }) => {
      const trimmed = serviceUrl.trim();
      if (trimmed !== '') {
        try {
          const url = new URL(trimmed);
          if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new Error('scheme');
        } catch {
          throw new AgentApiError('invalid_input', 'The service URL must start with http:// or https://.', [
            { path: ['serviceUrl'], message: 'Give a URL like https://flows.example.com, or leave it empty' },
          ]);
        }
      }
      agent.updateConfig({ ...agent.config, serviceUrl: trimmed === '' ? '' : normalizeServiceUrl(trimmed) });
      return settings();
    },

    signIn: async ({ token, admin }) => {
      const kind = admin ? 'admin-token' : 'access-token';
      await checkSecret(agent.serviceUrl, kind, token);
      await keepSecret(agent, kind, token);
      return settings();
    },

    signOut: async () => {
      // The embedded service's tokens are the agent's own: deleting them signed the agent out of its own service.
      if (agent.embedded)
        throw new AgentApiError(
          'invalid_input',
          'The embedded service signs this agent in by itself: there is nothing to sign out of. To use another ' +
            'service, set its URL above.',
        );
      await agent.team.forgetSecret('access-token');
      await agent.team.forgetSecret('admin-token');
      return settings();
    },

    getStartAtLogin: async () => startAtLogin(),

    setStartAtLogin: async ({ enabled }) => {
      try {
        return setStartAtLogin(enabled);
      } catch (error) {
        // systemctl refusing, or a folder that cannot be written: the machine's, not a bug of ours.
        throw new AgentApiError(
          'unavailable',
          `Start at login could not be changed: ${(error as Error).message}`,
        );
      }
    },
  };
}
