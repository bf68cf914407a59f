import { Option } from 'commander';
import { DEFAULT_SERVICE_URL, loadConfig } from '../agent/index.ts';
import { normalizeServiceUrl } from '../secrets/index.ts';
import { UsageError } from './usage-error.ts';

export function urlOption(): Option {
  return new Option(
    '--url <url>',
    `the service's address (default: $FLOWSYNC_URL, else the config file's serviceUrl, else ${DEFAULT_SERVICE_URL})`,
  );
}

/** The service a command talks to: --url, then $FLOWSYNC_URL, then the config file, then `flowsync serve`'s default. */
export function resolveServiceUrl(flag: string | undefined): string {
  const url = flag ?? (process.env.FLOWSYNC_URL || loadConfig().serviceUrl || DEFAULT_SERVICE_URL);
  try {
    const parsed = new URL(url);
    if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') throw new Error('not http');
    return normalizeServiceUrl(url);
  } catch {
    throw new UsageError(`"${url}" is not a service URL; give one like ${DEFAULT_SERVICE_URL}.`);
  }
}
