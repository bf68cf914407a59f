import { useMutation, useQueryClient } from '@tanstack/react-query';
import { useId, useState, type FormEvent } from 'react';
import type { AgentApi, RepositoryView } from '../../../src/window/index.ts';
import { ErrorLine, useStatus } from './common.tsx';

/**
 * Each repository's flow folders, owner and name, as Settings shows them: what a folder without `flows/` needs
 * ("nothing to sync; set its flow folders in Settings"). The agent checks them and restarts its sync with them.
 */
export function RepositoriesSettings({ api }: { api: AgentApi }) {
  const status = useStatus(api);
  const repositories = status.data?.repositories ?? [];
  return (
    <section aria-labelledby="repositories-title">
      <h3 id="repositories-title">Repositories</h3>
      {/* A line in its place while the status is on its way: the forms below stay where they are when it comes
          (the window test that saves a key failed 2 of 9 runs with its field moved 25 px). */}
      {!status.data && <p className="muted">…</p>}
      {status.data && repositories.length === 0 && (
        <p className="muted">No repository yet: add one on Sync.</p>
      )}
      {repositories.map((repo) => (
        <RepositoryForm key={repo.root} api={api} repo={repo} />
      ))}
    </section>
  );
}

function RepositoryForm({ api, repo }: { api: AgentApi; repo: RepositoryView }) {
  const id = useId();
  const queries = useQueryClient();
  const [flowRoots, setFlowRoots] = useState(repo.flowRoots.join('\n'));
  const [owner, setOwner] = useState(repo.settings.owner ?? '');
  const [name, setName] = useState(repo.settings.name ?? '');
  const save = useMutation({
    mutationFn: () =>
      api.setRepositorySettings({
        root: repo.root,
        flowRoots: flowRoots.split('\n').filter((line) => line.trim() !== ''),
        owner: owner.trim(),
        name: name.trim(),
      }),
    onSuccess: () => queries.invalidateQueries({ queryKey: ['status'] }),
  });
  const label = `${repo.owner}/${repo.name}`;
  const onSubmit = (event: FormEvent) => {
    event.preventDefault();
    save.mutate();
  };
  const edited = () => {
    if (save.error || save.isSuccess) save.reset();
  };
  return (
    <form onSubmit={onSubmit} aria-label={`Settings of ${label}`}>
      <fieldset className="plain">
        <legend>
          {label} <span className="muted">{repo.root}</span>
        </legend>
        <label htmlFor={`${id}-roots`}>Flow folders (one per line, inside the repository)</label>
        <textarea
          id={`${id}-roots`}
          rows={Math.max(2, repo.flowRoots.length + 1)}
          value={flowRoots}
          onChange={(event) => {
            setFlowRoots(event.target.value);
            edited();
          }}
        />
        <label htmlFor={`${id}-owner`}>Owner (empty: from its git remote)</label>
        <input
          id={`${id}-owner`}
          value={owner}
          placeholder={repo.owner}
          onChange={(event) => {
            setOwner(event.target.value);
            edited();
          }}
        />
        <label htmlFor={`${id}-name`}>Name (empty: from its git remote)</label>
        <input
          id={`${id}-name`}
          value={name}
          placeholder={repo.name}
          onChange={(event) => {
            setName(event.target.value);
            edited();
          }}
        />
        <button type="submit" disabled={save.isPending}>
          {save.isPending ? 'Saving…' : 'Save'}
        </button>
        {save.isSuccess && (
          <p className="muted" role="status">
            Saved: syncing {repo.flowRoots.map((root) => `${root}/`).join(', ')}.
          </p>
        )}
        <ErrorLine error={save.error} />
      </fieldset>
    </form>
  );
}
