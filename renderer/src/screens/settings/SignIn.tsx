import { useMutation } from '@tanstack/react-query';
import { useState } from 'react';
import type { AgentApi, Settings } from '../../../../src/window/index.ts';
import { ErrorLine, SecretInput } from '../common.tsx';
import { submit, useKeepSettings } from './keep-settings.ts';
import { SOURCE_TEXT } from './sources.ts';

/** Where the user's and the admin's tokens come from, Sign in with a token, and Sign out. */
export function SignIn({ api, data }: { api: AgentApi; data: Settings | undefined }) {
  const { keep, dropReadsInFlight, keepAndClear } = useKeepSettings();
  const [token, setToken] = useState('');
  const [admin, setAdmin] = useState(false);
  const signIn = useMutation({
    mutationFn: () => api.signIn({ token, admin }),
    onMutate: dropReadsInFlight,
    onSuccess: keepAndClear(setToken),
  });
  const signOut = useMutation({
    mutationFn: () => api.signOut({}),
    onMutate: dropReadsInFlight,
    onSuccess: keep,
  });
  return (
    <form onSubmit={submit(() => signIn.mutate())} aria-busy={!data}>
      <fieldset className="plain" disabled={!data}>
        {/* Both lines are there before the settings are, so that the forms below stay where they are. */}
        <ul className="sources" data-testid="secret-sources">
          <li>User token: {data ? SOURCE_TEXT[data.sources.user]('FLOWSYNC_TOKEN') : '…'}</li>
          <li>Admin token: {data ? SOURCE_TEXT[data.sources.admin]('FLOWSYNC_ADMIN_TOKEN') : '…'}</li>
        </ul>
        <SecretInput id="token" label="Token" value={token} onChange={setToken} />
        <label className="check">
          <input type="checkbox" checked={admin} onChange={(e) => setAdmin(e.target.checked)} />
          Admin token
        </label>
        <button type="submit" disabled={token.trim().length < 8}>
          Sign in
        </button>
        {/* The embedded service signs the agent in by itself: its tokens are not the user's to delete. */}
        {data?.activeServiceFrom !== 'embedded' && (
          <button type="button" onClick={() => signOut.mutate()}>
            Sign out
          </button>
        )}
        <ErrorLine error={signIn.error ?? signOut.error} />
      </fieldset>
    </form>
  );
}
