import { normalizeServiceUrl } from '../secrets/index.ts';
import type { AgentConfig } from './config.ts';

/** How the state names the service that runs inside the agent (its outboxes are kept per repository and service). */
export const EMBEDDED_SERVICE = 'embedded';

/** The service the agent uses: --url, then $FLOWSYNC_URL, then the config file's serviceUrl; '' for the embedded one. */
export function configuredServiceUrl(flag: string | undefined, config: AgentConfig): string {
  return flag || process.env.FLOWSYNC_URL || config.serviceUrl;
}

/** The state's name for that service: 'embedded', or the URL as the agent normalizes it. */
export function serviceKeyOf(configuredUrl: string): string {
  return configuredUrl ? normalizeServiceUrl(configuredUrl) : EMBEDDED_SERVICE;
}
