import type { RepositoryView } from '../../../../src/window/index.ts';
import { plural } from '../../plural.ts';
import type { WaitingChoices } from './waiting-choices.ts';

/**
 * Deletions held: more at once than the repository deletes without asking. Delete them on the service, or Restore
 * them on disk; each asks first.
 */
export function HeldDeletions({ repo, choices }: { repo: RepositoryView; choices: WaitingChoices }) {
  const { deletions, busy } = choices;
  const settleHeld = (choice: 'delete' | 'restore') => {
    const question =
      choice === 'delete'
        ? `Delete the ${plural(repo.heldDeletions, 'file')} on the service? Each stays in the service's history.`
        : `Put the ${plural(repo.heldDeletions, 'file')} back on disk from the service's copy? A file written there since is kept first.`;
    if (window.confirm(question)) deletions.mutate(choice);
  };
  return (
    <div>
      <p>
        {plural(repo.heldDeletions, 'deletion')} held: more at once than this repository deletes without
        asking (a branch switch, a removed folder). Nothing was deleted on the service.
      </p>
      <div className="row">
        <button disabled={busy || repo.paused} onClick={() => settleHeld('delete')}>
          Delete them on the service
        </button>
        <button disabled={busy} onClick={() => settleHeld('restore')}>
          Restore them on disk
        </button>
      </div>
    </div>
  );
}
