import type { RepositoryView } from '../../../../src/window/index.ts';
import { plural } from '../../plural.ts';

/** The card's counts: flows, files, pending, not sent, and the refused, conflicts, newer and held when any. */
export function Counts({ repo }: { repo: RepositoryView }) {
  const { counts } = repo;
  return (
    <p data-testid="counts">
      {plural(counts.flows, 'flow')} · {plural(counts.files, 'file')} · {counts.pending} pending ·{' '}
      {counts.warnings} not sent
      {counts.rejected > 0 ? ` · ${counts.rejected} refused` : ''}
      {counts.conflicts > 0 ? ` · ${counts.conflicts} in conflict` : ''}
      {counts.behind > 0 ? ` · ${counts.behind} newer on the service` : ''}
      {repo.heldDeletions > 0 ? ` · ${plural(repo.heldDeletions, 'deletion')} held` : ''}
    </p>
  );
}
