import type { Settings } from '../../../../src/window/index.ts';

/** Where each secret comes from, in words, with the variable that would provide it. */
export const SOURCE_TEXT: Record<Settings['sources']['user'], (variable: string) => string> = {
  environment: (variable) => `from ${variable} in the agent's environment`,
  keychain: () => 'in the OS keychain',
  embedded: () => "the embedded service's own",
  none: (variable) => `none (sign in below, or set ${variable})`,
  unavailable: (variable) => `none, and no OS keychain to keep one: set ${variable}`,
};

/** "lin_…0042 (from FLOWSYNC_API_KEY)", "none (add one below, or set FLOWSYNC_API_KEY)". */
export function apiKeyText(data: Settings): string {
  const source = data.sources.apiKey;
  if (data.apiKey !== null)
    return source === 'environment' ? `${data.apiKey} (from FLOWSYNC_API_KEY)` : data.apiKey;
  if (source === 'none') return 'none (add one below, or set FLOWSYNC_API_KEY)';
  return SOURCE_TEXT[source]('FLOWSYNC_API_KEY');
}
