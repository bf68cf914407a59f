import type { Settings } from '../../../../src/window/index.ts';

/**
 * No keychain: an error only when sync lacks its token; with the token from the environment sync works, and what
 * cannot be done is keeping what is typed here (the warning said "keys cannot be kept" while sync went on).
 */
export function KeychainLine({ data }: { data: Settings }) {
  const working = data.sources.user === 'environment' || data.sources.user === 'embedded';
  return working ? (
    <p className="muted" data-testid="keychain">
      No OS keychain is reachable: the agent uses{' '}
      {data.sources.user === 'embedded'
        ? "the embedded service's tokens"
        : 'FLOWSYNC_TOKEN from its environment'}
      , and what you type below cannot be kept.
    </p>
  ) : (
    <p className="error" data-testid="keychain">
      No OS keychain is reachable, so no sign-in can be kept: set FLOWSYNC_TOKEN in the agent's environment.
    </p>
  );
}
