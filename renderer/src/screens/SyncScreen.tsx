import { useMutation, useQueryClient } from '@tanstack/react-query';
import { useState, type FormEvent } from 'react';
import type { RepositoryView } from '../../../src/window/index.ts';
import { RecentActivity } from './RecentActivity.tsx';
import { ErrorLine, useStatus, type ScreenProps } from './common.tsx';
import { Repository } from './sync/Repository.tsx';

export function SyncScreen({ api }: ScreenProps) {
  const status = useStatus(api);
  const queries = useQueryClient();
  const refresh = () => queries.invalidateQueries({ queryKey: ['status'] });
  const [folder, setFolder] = useState('');
  const add = useMutation({
    mutationFn: (path: string) => api.addRepository({ path }),
    // The field is emptied only if it still holds the folder just added: one typed while the add ran (seconds, for
    // a first sync) is the user's next, and clearing it sent nothing at the next Add.
    onSuccess: (_added, path) => {
      setFolder((typed) => (typed.trim() === path ? '' : typed));
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
      {/* Below the form: a line that appears later does not move it under the pointer. */}
      {status.data?.serviceLimits && (
        <p className="warning" data-testid="service-limits">
          {status.data.serviceLimits}
        </p>
      )}
      {status.data?.repositories.length === 0 && <p>No repository yet: add a folder above.</p>}
      <ul className="repositories">
        {status.data?.repositories.map((repo, _, all) => (
          <Repository key={repo.root} repo={repo} name={cardName(repo, all)} api={api} onChange={refresh} />
        ))}
      </ul>
      <RecentActivity api={api} />
    </section>
  );
}

/**
 * How a card is named to a screen reader and in its dialogs: owner/name, with its folder when another card has the
 * same owner/name (two checkouts of one repository, a worktree): two regions "Waiting for you in acme/app" were
 * one name for two places (axe: landmark-unique), and Remove asked to stop syncing "acme/app" without saying which.
 */
export function cardName(repo: RepositoryView, all: readonly RepositoryView[]): string {
  const name = `${repo.owner}/${repo.name}`;
  const twin = all.some((other) => other.root !== repo.root && `${other.owner}/${other.name}` === name);
  return twin ? `${name} (${repo.root})` : name;
}
