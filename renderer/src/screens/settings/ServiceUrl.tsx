import { useMutation } from '@tanstack/react-query';
import { useState } from 'react';
import type { AgentApi, Settings } from '../../../../src/window/index.ts';
import { ErrorLine, useStatus } from '../common.tsx';
import { submit, useKeepSettings } from './keep-settings.ts';

/** The service URL field, which service is in use now and what chose it, and what that service lacks. */
export function ServiceUrl({ api, data }: { api: AgentApi; data: Settings | undefined }) {
  // What the service in use lacks (a service of the spec alone), said here too, beside its name.
  const status = useStatus(api);
  const { keep, dropReadsInFlight } = useKeepSettings();
  const [serviceUrl, setServiceUrl] = useState<string | null>(null);
  const saveUrl = useMutation({
    mutationFn: (url: string) => api.saveSettings({ serviceUrl: url }),
    onMutate: dropReadsInFlight,
    onSuccess: keep,
  });
  return (
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
  );
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
