import { Option } from 'commander';
import { DEFAULT_SERVICE_URL, loadConfig } from '../agent/index.ts';
import { normalizeServiceUrl } from '../secrets/index.ts';

export function urlOption(): Option {
  return new Option(
    '--url <url>',
    `the service's address (default: $FLOWSYNC_URL, else the config file's serviceUrl, else ${DEFAULT_SERVICE_URL})`,
  );
}

/** The service a command talks to: --url, then $FLOWSYNC_URL, then the config file, then `flowsync serve`'s default. */
export function resolveServiceUrl(flag: string | undefined): string {
  return normalizeServiceUrl(
    flag ?? (process.env.FLOWSYNC_URL || loadConfig().serviceUrl || DEFAULT_SERVICE_URL),
  );
}
