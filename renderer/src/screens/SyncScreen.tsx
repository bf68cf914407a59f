import { keepPreviousData, useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useState, type FormEvent } from 'react';
import type { AgentApi, FlowView, RepositoryView } from '../../../src/window/index.ts';
import { warnedPath } from '../../../src/protocol/index.ts';
import { plural } from '../plural.ts';
import { RecentActivity } from './RecentActivity.tsx';
import { ErrorLine, useStatus, type ScreenProps } from './common.tsx';

export function SyncScreen({ api }: ScreenProps) {
  const status = useStatus(api);
  const queries = useQueryClient();
  const refresh = () => queries.invalidateQueries({ queryKey: ['status'] });
  const [folder, setFolder] = useState('');
  const add = useMutation({
    mutationFn: (path: string) => api.addRepository({ path }),
    onSuccess: () => {
      setFolder('');
      void refresh();
    },
  });
  const onAdd = (event: FormEvent) => {
    event.preventDefault();
    if (folder.trim()) add.mutate(folder.trim());
  };

  return (
    <section aria-labelledby="sync-title">
      <h2 id="sync-title">Sync</h2>
      {/* There before the status is: a line that appeared above the form would move it under the pointer. */}
      <p className="muted" data-testid="service">
        Service: {status.data ? `${status.data.serviceUrl}${status.data.embedded ? ' (embedded)' : ''}` : '…'}
      </p>
      <ErrorLine error={status.error} />
      <form onSubmit={onAdd} aria-busy={!status.data}>
        <fieldset className="plain row" disabled={!status.data}>
          <label htmlFor="add-folder">Repository folder</label>
          <input
            id="add-folder"
            value={folder}
            onChange={(event) => {
              setFolder(event.target.value);
              if (add.error) add.reset();
            }}
            placeholder="/home/you/code/app"
          />
          <button type="submit" disabled={add.isPending}>
            {add.isPending ? 'Adding…' : 'Add folder'}
          </button>
        </fieldset>
      </form>
      <ErrorLine error={add.error} />
      {status.data?.repositories.length === 0 && <p>No repository yet: add a folder above.</p>}
      <ul className="repositories">
        {status.data?.repositories.map((repo) => (
          <Repository key={repo.root} repo={repo} api={api} onChange={refresh} />
        ))}
      </ul>
      <RecentActivity api={api} />
    </section>
  );
}

/** Busy repositories change at every step: their flows are read again once the work settles. */
function settledVersion(repo: RepositoryView): string {
  if (repo.phase === 'scanning' || repo.phase === 'syncing') return 'busy';
  const { counts } = repo;
  return [repo.phase, repo.lastSyncAt, counts.files, counts.pending, counts.warnings, counts.rejected].join(
    '|',
  );
}

function Repository({ repo, api, onChange }: { repo: RepositoryView; api: AgentApi; onChange: () => void }) {
  const act = useMutation({
    mutationFn: async (action: 'sync' | 'pause' | 'resume' | 'remove') => {
      if (action === 'sync') await api.syncNow({ root: repo.root });
      if (action === 'pause') await api.pauseRepository({ root: repo.root });
      if (action === 'resume') await api.resumeRepository({ root: repo.root });
      if (action === 'remove') await api.removeRepository({ root: repo.root });
    },
    onSettled: onChange,
  });
  const version = settledVersion(repo);
  const detail = useQuery({
    queryKey: ['detail', repo.root, version],
    queryFn: () => api.repositoryDetail({ root: repo.root }),
    enabled: version !== 'busy',
    placeholderData: keepPreviousData,
  });
  const { counts } = repo;
  const label = `${repo.owner}/${repo.name}`;
  const stopped = repo.phase === 'paused' || repo.phase === 'stopped';
  return (
    <li className="repository" aria-label={label}>
      <div className="row">
        <h3>{label}</h3>
        <span className={`phase phase-${repo.phase}`} data-testid="phase">
          {repo.phase}
        </span>
      </div>
      <p className="muted">{repo.root}</p>
      <p data-testid="counts">
        {plural(counts.flows, 'flow')} · {plural(counts.files, 'file')} · {counts.pending} pending ·{' '}
        {counts.warnings} not sent
        {counts.rejected > 0 ? ` · ${counts.rejected} refused` : ''}
      </p>
      {repo.message && <p className="muted">{repo.message}</p>}
      {repo.progress && (
        <label className="progress">
          {repo.progress.stage === 'hashing' ? 'Hashing files' : 'Uploading flows'}
          <progress max={repo.progress.total} value={repo.progress.done} />
        </label>
      )}
      <p className="muted">
        Last sync: {repo.lastSyncAt ? new Date(repo.lastSyncAt).toLocaleString() : 'never'}
      </p>
      {repo.configProblem && <p className="error">{repo.configProblem}</p>}
      <ErrorLine error={detail.error} />
      {detail.data && detail.data.flows.length > 0 && (
        <Flows api={api} root={repo.root} flows={detail.data.flows} version={version} />
      )}
      {repo.warnings.length > 0 && (
        <details>
          <summary>{plural(repo.warnings.length, 'file')} not sent</summary>
          <ul className="files">
            {repo.warnings.map((w) => (
              <li key={warnedPath(w)}>
                <code>{warnedPath(w)}</code>: {w.reason}
              </li>
            ))}
          </ul>
        </details>
      )}
      <div className="row">
        <button onClick={() => act.mutate('sync')} disabled={stopped || act.isPending}>
          Sync now
        </button>
        {repo.phase === 'paused' ? (
          <button onClick={() => act.mutate('resume')}>Resume</button>
        ) : (
          <button onClick={() => act.mutate('pause')} disabled={repo.phase === 'stopped'}>
            Pause
          </button>
        )}
        <button
          onClick={() => {
            if (window.confirm(`Stop syncing ${label}? The service keeps what it has.`)) act.mutate('remove');
          }}
        >
          Remove
        </button>
      </div>
      <ErrorLine error={act.error} />
    </li>
  );
}

const FLOW_STATES: Record<FlowView['state'], string> = {
  synced: 'synced',
  pending: 'pending',
  refused: 'refused',
  'not-sent': 'not sent',
};

function Flows(props: { api: AgentApi; root: string; flows: FlowView[]; version: string }) {
  const [open, setOpen] = useState<ReadonlySet<string>>(new Set());
  const toggle = (flowPath: string) =>
    setOpen((current) => {
      const next = new Set(current);
      if (!next.delete(flowPath)) next.add(flowPath);
      return next;
    });
  return (
    <table className="flows">
      <caption className="visually-hidden">Flows</caption>
      <thead>
        <tr>
          <th scope="col">Flow</th>
          <th scope="col">Files</th>
          <th scope="col">State</th>
        </tr>
      </thead>
      {props.flows.map((flow) => {
        const expanded = open.has(flow.flowPath);
        const filesId = `files-${props.root}-${flow.flowPath}`.replace(/[^\w-]/g, '_');
        return (
          <tbody key={flow.flowPath}>
            <tr>
              <th scope="row">
                <button
                  className="disclosure"
                  aria-expanded={expanded}
                  aria-controls={expanded ? filesId : undefined}
                  onClick={() => toggle(flow.flowPath)}
                  title={flow.flowPath}
                >
                  {flow.name}
                </button>
              </th>
              <td>{flow.files}</td>
              <td>
                <span className={`state state-${flow.state}`}>{FLOW_STATES[flow.state]}</span>
                {flow.state === 'pending' && ` (${flow.pending})`}
                {flow.state !== 'not-sent' && flow.notSent > 0 && ` · ${flow.notSent} not sent`}
                {flow.message && <span className="error">: {flow.message}</span>}
              </td>
            </tr>
            {expanded && (
              <tr id={filesId}>
                <td colSpan={3}>
                  <FlowFiles api={props.api} root={props.root} flow={flow} version={props.version} />
                </td>
              </tr>
            )}
          </tbody>
        );
      })}
    </table>
  );
}

function FlowFiles(props: { api: AgentApi; root: string; flow: FlowView; version: string }) {
  const { root, flow } = props;
  const files = useQuery({
    queryKey: ['flowFiles', root, flow.flowPath, props.version],
    queryFn: () => props.api.flowFiles({ root, flowPath: flow.flowPath }),
    placeholderData: keepPreviousData,
  });
  if (files.error) return <ErrorLine error={files.error} />;
  if (!files.data) return <p className="muted">Reading the files of {flow.name}…</p>;
  return (
    <ul className="files" aria-label={`Files of ${flow.name}`}>
      {files.data.files.map((file) => (
        <li key={file.path}>
          <code>{file.path}</code>{' '}
          <span className={`state state-${file.state}`}>{FILE_STATES[file.state]}</span>
          {file.reason && <span className="muted">: {file.reason}</span>}
        </li>
      ))}
    </ul>
  );
}

const FILE_STATES = { synced: 'synced', pending: 'pending', 'not-sent': 'not sent' } as const;
