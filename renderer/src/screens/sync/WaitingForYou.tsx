import { keepPreviousData, useQuery } from '@tanstack/react-query';
import type { AgentApi, RepositoryView } from '../../../../src/window/index.ts';
import { needsOf } from '../../../../src/protocol/index.ts';
import { waitingId } from '../../notifications.ts';
import { GitChanges } from '../GitChanges.tsx';
import { ErrorLine } from '../common.tsx';
import { Conflicts } from './Conflicts.tsx';
import { HeldDeletions } from './HeldDeletions.tsx';
import { Kept } from './Kept.tsx';
import { NotInCheckout } from './NotInCheckout.tsx';
import { NotWritten } from './NotWritten.tsx';
import { useWaitingChoices } from './waiting-choices.ts';

/**
 * What waits for the user in one repository, a part per kind of need (needsOf): files in conflict (Conflicts),
 * deletions held (HeldDeletions), git's change sets held (GitChanges), files on the service not in this checkout
 * (NotInCheckout). A repo-config.json that is not valid is said on the card and settled on the Repository config
 * screen. Nothing here is ever called "in sync".
 */
export function WaitingForYou(props: {
  api: AgentApi;
  repo: RepositoryView;
  name: string;
  version: string;
  onChange: () => void;
}) {
  const { api, repo, onChange } = props;
  const root = repo.root;
  const conflicts = useQuery({
    queryKey: ['conflicts', root, props.version],
    queryFn: () => api.conflicts({ root }),
    placeholderData: keepPreviousData,
  });
  const choices = useWaitingChoices(api, root, onChange);
  const { resolve, deletions, notHere } = choices;
  const needs = new Set(needsOf(repo).map((need) => need.kind));
  return (
    <section
      className="waiting"
      aria-label={`Waiting for you in ${props.name}`}
      id={waitingId(root)}
      tabIndex={-1}
    >
      <h4>Waiting for you</h4>
      {repo.paused && <p className="muted">Paused: resume to settle these on the service.</p>}
      <ErrorLine error={conflicts.error ?? resolve.error ?? deletions.error ?? notHere.error} />
      <NotWritten files={[...(resolve.data?.notWritten ?? []), ...(deletions.data?.notWritten ?? [])]} />
      <Kept files={[...(resolve.data?.kept ?? []), ...(deletions.data?.kept ?? [])]} />
      {/* By its list, not the card's count: each row settles a file the agent named. */}
      <Conflicts
        api={api}
        repo={repo}
        list={conflicts.data?.conflicts ?? []}
        choices={choices}
        version={props.version}
      />
      {needs.has('held-deletions') && <HeldDeletions repo={repo} choices={choices} />}
      {needs.has('git-changes') && (
        <GitChanges api={api} repo={repo} name={props.name} version={props.version} onChange={onChange} />
      )}
      {needs.has('not-in-checkout') && <NotInCheckout repo={repo} choices={choices} />}
    </section>
  );
}
