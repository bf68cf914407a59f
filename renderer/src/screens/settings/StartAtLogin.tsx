import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import type { AgentApi } from '../../../../src/window/index.ts';
import { ErrorLine } from '../common.tsx';
import { submit } from './keep-settings.ts';

/** Start at login, ticked when the entry there starts this flowsync, and where that entry is. */
export function StartAtLogin({ api }: { api: AgentApi }) {
  const queries = useQueryClient();
  const [wanted, setWanted] = useState<boolean | null>(null);
  const login = useQuery({ queryKey: ['start-at-login'], queryFn: () => api.getStartAtLogin({}) });
  const setLogin = useMutation({
    mutationFn: (enabled: boolean) => api.setStartAtLogin({ enabled }),
    onSuccess: (value) => queries.setQueryData(['start-at-login'], value),
  });
  return (
    <form onSubmit={submit(() => undefined)}>
      {/* The entry `flowsync autostart enable` writes, on every platform (README: Settings). */}
      <fieldset className="plain" disabled={!login.data}>
        <label className="check">
          <input
            type="checkbox"
            // What was asked for while the agent writes it; a stale entry starts another flowsync: unticked, so
            // that ticking points it at this one.
            checked={wanted ?? (login.data ? login.data.enabled && !login.data.stale : false)}
            onChange={(event) => {
              setWanted(event.target.checked);
              setLogin.mutate(event.target.checked, { onSettled: () => setWanted(null) });
            }}
          />
          Start at login
        </label>
        {login.data && (
          <p className="muted" data-testid="start-at-login">
            {login.data.stale
              ? `${login.data.path} starts another flowsync: tick to start this one instead.`
              : login.data.enabled
                ? `The agent starts when you log in: ${login.data.path}.`
                : `Off. Ticked, the agent starts when you log in (${login.data.path}).`}
          </p>
        )}
        <ErrorLine error={login.error ?? setLogin.error} />
      </fieldset>
    </form>
  );
}
