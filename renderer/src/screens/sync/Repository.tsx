import { keepPreviousData, useMutation, useQuery } from '@tanstack/react-query';
import type { AgentApi, RepositoryView } from '../../../../src/window/index.ts';
import { changeSetWords, needsOf } from '../../../../src/protocol/index.ts';
import { repositoryId } from '../../notifications.ts';
import { FindHistory } from '../FileHistory.tsx';
import { ErrorLine } from '../common.tsx';
import { CardActions, type CardAction } from './CardActions.tsx';
import { Counts } from './Counts.tsx';
import { Flows } from './Flows.tsx';
import { Newer } from './Newer.tsx';
import { NotSent } from './NotSent.tsx';
import { RepositoryHeading } from './RepositoryHeading.tsx';
import { WaitingForYou } from './WaitingForYou.tsx';
import { WhereItStands } from './WhereItStands.tsx';

/** One repository's card on the Sync screen: its state, what waits for its user, its flows, and its buttons. */
export function Repository({
  repo,
  name,
  api,
  onChange,
}: {
  repo: RepositoryView;
  /** The card's name (cardName): owner/name, with the folder when another card has the same. */
  name: string;
  api: AgentApi;
  onChange: () => void;
}) {
  const act = useMutation({
    mutationFn: async (action: CardAction) => {
      if (action === 'sync') await api.syncNow({ root: repo.root });
      if (action === 'source') await api.addRepository({ path: repo.root, source: true });
      if (action === 'rename') await api.addRepository({ path: repo.root, rename: true });
      if (action === 'pause') await api.pauseRepository({ root: repo.root });
      if (action === 'resume') await api.resumeRepository({ root: repo.root });
      if (action === 'remove') await api.removeRepository({ root: repo.root });
    },
    onSettled: onChange,
  });
  const version = restingVersion(repo);
  const detail = useQuery({
    queryKey: ['detail', repo.root, version],
    queryFn: () => api.repositoryDetail({ root: repo.root }),
    enabled: version !== 'busy',
    placeholderData: keepPreviousData,
  });
  const acting = { act: act.mutate, busy: act.isPending };
  return (
    // Focusable from a notification's click (tabIndex -1: not a stop of its own for Tab).
    <li className="repository" aria-label={name} id={repositoryId(repo.root)} tabIndex={-1}>
      <RepositoryHeading repo={repo} />
      <p className="muted">{repo.root}</p>
      <Counts repo={repo} />
      {repo.counts.behind > 0 && <Newer api={api} repo={repo} version={version} onChange={onChange} />}
      {needsOf(repo).some((need) => need.kind !== 'repo-config') && (
        <WaitingForYou api={api} repo={repo} name={name} version={version} onChange={onChange} />
      )}
      <WhereItStands repo={repo} {...acting} />
      <ErrorLine error={detail.error} />
      {detail.data && detail.data.flows.length > 0 && (
        <Flows api={api} root={repo.root} flows={detail.data.flows} version={version} onChange={onChange} />
      )}
      {detail.data && detail.data.flows.length > 0 && (
        <FindHistory api={api} root={repo.root} version={version} onChange={onChange} />
      )}
      <NotSent repo={repo} />
      <CardActions repo={repo} name={name} {...acting} />
      <ErrorLine error={act.error} />
    </li>
  );
}

/** Busy repositories change at every step: their flows are read again once the engine rests. */
function restingVersion(repo: RepositoryView): string {
  if (repo.phase === 'scanning' || repo.phase === 'syncing') return 'busy';
  const { counts } = repo;
  return [
    repo.phase,
    repo.lastSyncAt,
    counts.files,
    counts.pending,
    counts.warnings,
    counts.rejected,
    counts.conflicts,
    counts.behind,
    repo.heldDeletions,
    repo.notInCheckout,
    (repo.gitChanges ?? []).map(changeSetWords).join(';'),
  ].join('|');
}
