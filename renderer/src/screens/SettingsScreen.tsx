import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useState, type FormEvent } from 'react';
import type { AgentApi, Settings, WhoYouAre as You } from '../../../src/window/index.ts';
import { trackerUserName } from '../../../src/protocol/index.ts';
import { ErrorLine, SecretInput, useStatus, type ScreenProps } from './common.tsx';
import { ServiceMember } from './ServiceMember.tsx';
import { NotifyMe } from './NotifyMe.tsx';
import { RepositoriesSettings } from './RepositorySettings.tsx';

/** Where each secret comes from, in words, with the variable that would provide it. */
const SOURCE_TEXT: Record<Settings['sources']['user'], (variable: string) => string> = {
  environment: (variable) => `from ${variable} in the agent's environment`,
  keychain: () => 'in the OS keychain',
  embedded: () => "the embedded service's own",
  none: (variable) => `none (sign in below, or set ${variable})`,
  unavailable: (variable) => `none, and no OS keychain to keep one: set ${variable}`,
};

/** "lin_…0042 (from FLOWSYNC_API_KEY)", "none (add one below, or set FLOWSYNC_API_KEY)". */
function apiKeyText(data: Settings): string {
  const source = data.sources.apiKey;
  if (data.apiKey !== null)
    return source === 'environment' ? `${data.apiKey} (from FLOWSYNC_API_KEY)` : data.apiKey;
  if (source === 'none') return 'none (add one below, or set FLOWSYNC_API_KEY)';
  return SOURCE_TEXT[source]('FLOWSYNC_API_KEY');
}

/** Which service is in use and what chose it: the field is the config file's, which `--url` and FLOWSYNC_URL beat. */
function inUse(data: Settings): string {
  const url = data.activeServiceUrl;
  switch (data.activeServiceFrom) {
    case 'embedded':
      return `In use now: the embedded service (${url}). A change takes effect at the next start.`;
    case 'environment':
      return `In use now: ${url}, from FLOWSYNC_URL in the agent's environment, which wins over this field.`;
    case 'command line':
      return `In use now: ${url}, from --url on the agent's command line, which wins over this field.`;
    case 'config file':
      return `In use now: ${url}. A change takes effect at the next start.`;
  }
}

/**
 * No keychain: an error only when sync lacks its token; with the token from the environment sync works, and what
 * cannot be done is keeping what is typed here (the warning said "keys cannot be kept" while sync went on).
 */
function KeychainLine({ data }: { data: Settings }) {
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

export function SettingsScreen({ api }: ScreenProps) {
  const queries = useQueryClient();
  const settings = useQuery({ queryKey: ['settings'], queryFn: () => api.getSettings({}) });
  // What the service in use lacks (a service of the spec alone), said here too, beside its name.
  const status = useStatus(api);
  const keep = (value: Settings) => queries.setQueryData(['settings'], value);
  // A read still on its way when a change is sent may have been answered before the change: it is dropped, or its
  // older answer would replace the change's own when it lands. Cancelled before the change leaves, the query goes
  // back to what it showed; cancelled after the answer (tried in round 10), its revert could land last.
  const dropReadsInFlight = () => queries.cancelQueries({ queryKey: ['settings'] });
  // A secret leaves the form as soon as the agent has it.
  const keepAndClear = (clear: (text: string) => void) => (value: Settings) => {
    clear('');
    keep(value);
  };
  const [serviceUrl, setServiceUrl] = useState<string | null>(null);
  const [token, setToken] = useState('');
  const [admin, setAdmin] = useState(false);
  const [apiKey, setApiKey] = useState('');
  const saveUrl = useMutation({
    mutationFn: (url: string) => api.saveSettings({ serviceUrl: url }),
    onMutate: dropReadsInFlight,
    onSuccess: keep,
  });
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
  const saveKey = useMutation({
    mutationFn: () => api.setApiKey({ secret: apiKey }),
    onMutate: dropReadsInFlight,
    onSuccess: (value) => {
      keepAndClear(setApiKey)(value);
      // A new key may be someone else's: asked again.
      void queries.invalidateQueries({ queryKey: ['who-you-are'] });
    },
  });
  const [wanted, setWanted] = useState<boolean | null>(null);
  const login = useQuery({ queryKey: ['start-at-login'], queryFn: () => api.getStartAtLogin({}) });
  const setLogin = useMutation({
    mutationFn: (enabled: boolean) => api.setStartAtLogin({ enabled }),
    onSuccess: (value) => queries.setQueryData(['start-at-login'], value),
  });
  const submit = (action: () => void) => (event: FormEvent) => {
    event.preventDefault();
    action();
  };
  const data = settings.data;

  return (
    <section aria-labelledby="settings-title" className="settings">
      <h2 id="settings-title">Settings</h2>
      <ErrorLine error={settings.error} />
      {data?.keychain === 'unavailable' && <KeychainLine data={data} />}
      {/* First: where "nothing to sync; set its flow folders in Settings" leads. */}
      <RepositoriesSettings api={api} />
      <form onSubmit={submit(() => saveUrl.mutate(serviceUrl ?? data?.serviceUrl ?? ''))}>
        {/* Not editable until the settings arrive, so nothing typed is shown over or lost. */}
        <fieldset className="plain" disabled={!data}>
          <label htmlFor="service-url">Service URL (empty: the embedded service)</label>
          <input
            id="service-url"
            value={serviceUrl ?? data?.serviceUrl ?? ''}
            onChange={(event) => setServiceUrl(event.target.value)}
            placeholder="https://flows.example.com"
          />
          <button type="submit">Save</button>
          <p className="muted" data-testid="service-in-use">
            {data ? inUse(data) : 'In use now: …'}
          </p>
          {status.data?.serviceLimits && (
            <p className="warning" data-testid="settings-service-limits">
              {status.data.serviceLimits}
            </p>
          )}
          <ErrorLine error={saveUrl.error} />
        </fieldset>
      </form>
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
      <NotifyMe />
      {/* Last: it comes when the service answers, and would push the forms above down under the user's pointer. */}
      {data && data.activeServiceFrom !== 'embedded' && <ServiceMember api={api} />}
    </section>
  );
}

/**
 * Who the personal API key makes the user in the tracker ("Open tasks assigned to you" are that user's), and, for
 * an operator, whom else it may be registered to: the user of git's email first, when nobody is yet.
 */
function WhoYouAre({ api }: { api: AgentApi }) {
  const queries = useQueryClient();
  // Its own question, asked of the service: the settings above never wait for it.
  const asked = useQuery({ queryKey: ['who-you-are'], queryFn: () => api.whoYouAre({}) });
  const you = asked.data;
  const [picked, setPicked] = useState<string | null>(null);
  const pick = useMutation({
    mutationFn: (userId: string) => api.setKeyOwner({ userId }),
    onSuccess: (value: You) => {
      setPicked(null);
      queries.setQueryData(['who-you-are'], value);
      // The tasks assigned to "you" are another user's now.
      void queries.invalidateQueries({ queryKey: ['tasks'] });
    },
  });
  if (!you) return <ErrorLine error={asked.error} />;
  const byEmail = you.choices.find(
    (user) => you.gitEmail !== null && user.email?.toLowerCase() === you.gitEmail.toLowerCase(),
  );
  const chosen = picked ?? you.user?.id ?? byEmail?.id ?? you.choices[0]?.id ?? '';
  return (
    <div data-testid="you">
      {you.user ? (
        <p>
          You are <strong>{trackerUserName(you.user)}</strong> in the tracker.
        </p>
      ) : (
        <p className="error">{you.problem}</p>
      )}
      {you.choices.length > 0 && (
        <div className="row">
          <label htmlFor="key-owner">{you.user ? 'Not you? Choose who you are' : 'Choose who you are'}</label>
          <select id="key-owner" value={chosen} onChange={(event) => setPicked(event.target.value)}>
            {you.choices.map((user) => (
              <option key={user.id} value={user.id}>
                {trackerUserName(user)}
              </option>
            ))}
          </select>
          <button
            type="button"
            disabled={pick.isPending || chosen === '' || chosen === you.user?.id}
            onClick={() => pick.mutate(chosen)}
          >
            This is me
          </button>
        </div>
      )}
      <ErrorLine error={pick.error ?? asked.error} />
    </div>
  );
}
