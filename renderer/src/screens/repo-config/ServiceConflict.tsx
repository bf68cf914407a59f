import { useMutation, useQueryClient } from '@tanstack/react-query';
import type { AgentApi, RepoConfigConflictView } from '../../../../src/window/index.ts';
import { ErrorLine } from '../common.tsx';

/** A teammate's newer config on the service: theirs written here, or mine sent on top; the form then shows the file. */
export function ServiceConflict(props: {
  api: AgentApi;
  root: string;
  conflict: RepoConfigConflictView;
  onSettled: (kept: string | null) => void;
}) {
  const { api, root, conflict, onSettled } = props;
  const queries = useQueryClient();
  const settle = useMutation({
    mutationFn: (keep: 'mine' | 'theirs') => api.settleRepoConfig({ root, keep }),
    onSuccess: (view) => {
      queries.setQueryData(['repoConfig', root], view);
      onSettled(view.keptAs && `The service's config is in the file; yours was kept in ${view.keptAs}.`);
    },
  });
  return (
    <div role="alert" className="error" data-testid="repo-config-conflict">
      <p>
        The repository's config changed on the service by {conflict.writtenBy ?? 'someone'} at{' '}
        {conflict.writtenAt}: yours is saved in this checkout, not sent, and the service's was not
        overwritten.
      </p>
      <p className="muted">
        The service's: <code>{JSON.stringify(conflict.config)}</code>
      </p>
      <button type="button" disabled={settle.isPending} onClick={() => settle.mutate('theirs')}>
        Take the service's
      </button>
      <button type="button" disabled={settle.isPending} onClick={() => settle.mutate('mine')}>
        Keep mine
      </button>
      <ErrorLine error={settle.error} />
    </div>
  );
}
