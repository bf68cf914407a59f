import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useState, type FormEvent } from 'react';
import type { Settings } from '../../../src/agent/index.ts';
import { ErrorLine, type ScreenProps } from './common.tsx';

export function SettingsScreen({ api }: ScreenProps) {
  const queries = useQueryClient();
  const settings = useQuery({ queryKey: ['settings'], queryFn: () => api.getSettings({}) });
  const keep = (value: Settings) => queries.setQueryData(['settings'], value);
  const [serviceUrl, setServiceUrl] = useState<string | null>(null);
  const [token, setToken] = useState('');
  const [admin, setAdmin] = useState(false);
  const [apiKey, setApiKey] = useState('');
  const saveUrl = useMutation({
    mutationFn: (url: string) => api.saveSettings({ serviceUrl: url }),
    onSuccess: keep,
  });
  const signIn = useMutation({
    mutationFn: () => api.signIn({ token, admin }),
    onSuccess: (value) => {
      setToken('');
      keep(value);
    },
  });
  const signOut = useMutation({ mutationFn: () => api.signOut({}), onSuccess: keep });
  const saveKey = useMutation({
    mutationFn: () => api.setApiKey({ secret: apiKey }),
    onSuccess: (value) => {
      setApiKey('');
      keep(value);
    },
  });
  const submit = (action: () => void) => (event: FormEvent) => {
    event.preventDefault();
    action();
  };
  const data = settings.data;

  return (
    <section aria-labelledby="settings-title">
      <h2 id="settings-title">Settings</h2>
      <ErrorLine error={settings.error} />
      {data?.keychain === 'unavailable' && (
        <p className="error">
          No OS keychain is reachable: keys cannot be kept. Set FLOWSYNC_TOKEN and friends instead.
        </p>
      )}
      <form onSubmit={submit(() => saveUrl.mutate(serviceUrl ?? data?.serviceUrl ?? ''))}>
        <label htmlFor="service-url">Service URL (empty: the embedded service)</label>
        <input
          id="service-url"
          value={serviceUrl ?? data?.serviceUrl ?? ''}
          onChange={(event) => setServiceUrl(event.target.value)}
          placeholder="https://flows.example.com"
        />
        <button type="submit">Save</button>
        <p className="muted">
          In use now: {data?.activeServiceUrl}. A change takes effect at the next start.
        </p>
        <ErrorLine error={saveUrl.error} />
      </form>
      <form onSubmit={submit(() => signIn.mutate())}>
        <p>
          Signed in: {data?.signedIn.user ? 'user' : 'no user token'}
          {data?.signedIn.admin ? ', admin' : ''}
        </p>
        <label htmlFor="token">Token</label>
        <input
          id="token"
          type="password"
          autoComplete="off"
          value={token}
          onChange={(e) => setToken(e.target.value)}
        />
        <label className="check">
          <input type="checkbox" checked={admin} onChange={(e) => setAdmin(e.target.checked)} />
          Admin token
        </label>
        <button type="submit" disabled={token.trim().length < 8}>
          Sign in
        </button>
        <button type="button" onClick={() => signOut.mutate()}>
          Sign out
        </button>
        <ErrorLine error={signIn.error ?? signOut.error} />
      </form>
      <form onSubmit={submit(() => saveKey.mutate())}>
        <p data-testid="api-key">Personal API key: {data?.apiKey ?? 'none'}</p>
        <label htmlFor="api-key">New personal API key</label>
        <input
          id="api-key"
          type="password"
          autoComplete="off"
          value={apiKey}
          onChange={(e) => setApiKey(e.target.value)}
        />
        <button type="submit" disabled={apiKey.trim().length < 8}>
          Save key
        </button>
        <ErrorLine error={saveKey.error} />
      </form>
    </section>
  );
}
