import { normalizeServiceUrl } from '../secrets/index.ts';
import type { AgentConfig } from './config.ts';

/** How the state names the service that runs inside the agent (its outboxes are kept per repository and service). */
export const EMBEDDED_SERVICE = 'embedded';

/**
 * The one precedence of the service URL, for the agent and every command: --url, then $FLOWSYNC_URL, then the
 * config file's serviceUrl; '' when none names one, and then the caller uses the embedded service (the agent
 * starts it; a command asks the running agent for its address). An empty value at any step is "not given here"
 * and falls through, as an unset one does: `--url "$SERVICE"` with $SERVICE unset is not a choice of service.
 * The config may be given as a function, read only when the flag and the environment are empty, so that
 * `flowsync call --url U` neither needs a valid config file nor moves a broken one aside.
 */
export function configuredServiceUrl(
  flag: string | undefined,
  config: AgentConfig | (() => AgentConfig),
): string {
  return flag || process.env.FLOWSYNC_URL || (typeof config === 'function' ? config() : config).serviceUrl;
}

/** The state's name for that service: 'embedded', or the URL as the agent normalizes it. */
export function serviceKeyOf(configuredUrl: string): string {
  return configuredUrl ? normalizeServiceUrl(configuredUrl) : EMBEDDED_SERVICE;
}
