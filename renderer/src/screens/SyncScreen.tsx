import { useMutation, useQueryClient } from '@tanstack/react-query';
import { useState, type FormEvent } from 'react';
import type { AgentApi, RepositoryView } from '../../../src/agent/index.ts';
import { describeFileWarning, warnedPath } from '../../../src/protocol/index.ts';
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
      {status.data && (
        <p className="muted">
          Service: {status.data.serviceUrl}
          {status.data.embedded ? ' (embedded)' : ''}
        </p>
      )}
      <ErrorLine error={status.error} />
      <form onSubmit={onAdd} className="row">
        <label htmlFor="add-folder">Repository folder</label>
        <input
          id="add-folder"
          value={folder}
          onChange={(event) => setFolder(event.target.value)}
          placeholder="/home/you/code/app"
        />
        <button type="submit" disabled={add.isPending}>
          {add.isPending ? 'Adding…' : 'Add folder'}
        </button>
      </form>
      <ErrorLine error={add.error} />
      {status.data?.repositories.length === 0 && <p>No repository yet: add a folder above.</p>}
      <ul className="repositories">
        {status.data?.repositories.map((repo) => (
          <Repository key={repo.root} repo={repo} api={api} onChange={refresh} />
        ))}
      </ul>
    </section>
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
  const { counts } = repo;
  const label = `${repo.owner}/${repo.name}`;
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
        {counts.flows} flows · {counts.files} files · {counts.pending} pending · {counts.warnings} not sent
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
      {(repo.warnings.length > 0 || repo.rejected.length > 0) && (
        <details>
          <summary>Not sent and refused</summary>
          <ul>
            {repo.warnings.map((w) => (
              <li key={warnedPath(w)}>
                {warnedPath(w)}: {describeFileWarning(w.warning)}
              </li>
            ))}
            {repo.rejected.map((r) => (
              <li key={r.flowPath}>
                {r.flowPath}: refused: {r.message}
              </li>
            ))}
          </ul>
        </details>
      )}
      <div className="row">
        <button onClick={() => act.mutate('sync')} disabled={repo.phase === 'paused'}>
          Sync now
        </button>
        {repo.phase === 'paused' ? (
          <button onClick={() => act.mutate('resume')}>Resume</button>
        ) : (
          <button onClick={() => act.mutate('pause')}>Pause</button>
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
