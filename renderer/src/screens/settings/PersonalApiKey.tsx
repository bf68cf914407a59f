import { useMutation, useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import type { AgentApi, Settings } from '../../../../src/window/index.ts';
import { ErrorLine, SecretInput } from '../common.tsx';
import { submit, useKeepSettings } from './keep-settings.ts';
import { apiKeyText } from './sources.ts';
import { WhoYouAre } from './WhoYouAre.tsx';

/** The personal API key (the tracker's): which one, whom it makes the user, and a field for a new one. */
export function PersonalApiKey({ api, data }: { api: AgentApi; data: Settings | undefined }) {
  const queries = useQueryClient();
  const { dropReadsInFlight, keepAndClear } = useKeepSettings();
  const [apiKey, setApiKey] = useState('');
  const saveKey = useMutation({
    mutationFn: () => api.setApiKey({ secret: apiKey }),
    onMutate: dropReadsInFlight,
    onSuccess: (value) => {
      keepAndClear(setApiKey)(value);
      // A new key may be someone else's: asked again.
      void queries.invalidateQueries({ queryKey: ['who-you-are'] });
    },
  });
  return (
    <form onSubmit={submit(() => saveKey.mutate())} aria-busy={!data}>
      <fieldset className="plain" disabled={!data}>
        <p data-testid="api-key">Personal API key: {data ? apiKeyText(data) : '…'}</p>
        {data?.apiKey && <WhoYouAre api={api} />}
        <SecretInput id="api-key" label="New personal API key" value={apiKey} onChange={setApiKey} />
        <button type="submit" disabled={apiKey.trim().length < 8}>
          Save key
        </button>
        <ErrorLine error={saveKey.error} />
      </fieldset>
    </form>
  );
}
