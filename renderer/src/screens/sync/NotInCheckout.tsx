import type { RepositoryView } from '../../../../src/window/index.ts';
import { waitingId } from '../../notifications.ts';
import { plural } from '../../plural.ts';
import { ErrorLine } from '../common.tsx';
import type { NotInCheckoutFile, WaitingChoices } from './waiting-choices.ts';

/**
 * Files on the service that are not in this checkout (written by another checkout, or before this one was made):
 * kept there until its user chooses. Delete them on the service lists them first, in a dialog, and deletes only
 * that list; Write them to disk asks, and replaces no file that is there.
 */
export function NotInCheckout({ repo, choices }: { repo: RepositoryView; choices: WaitingChoices }) {
  const { notHere, listNotHere, deleting, busy } = choices;
  return (
    <div role="group" aria-label="Files on the service not in this checkout">
      <p>
        {plural(repo.notInCheckout, 'file')} on the service {repo.notInCheckout === 1 ? 'is' : 'are'} not in
        this checkout (written by another checkout, or before this one was made): kept there until you choose.
      </p>
      <div className="row">
        <button disabled={busy || repo.paused} onClick={() => listNotHere.mutate()}>
          Delete them on the service
        </button>
        <button
          disabled={busy}
          onClick={() => {
            if (
              window.confirm(
                `Write the ${plural(repo.notInCheckout, 'file')} to disk from the service's copy? None replaces a file that is there.`,
              )
            )
              notHere.mutate({ choice: 'restore' });
          }}
        >
          Write them to disk
        </button>
      </div>
      <ErrorLine error={listNotHere.error} />
      {deleting !== null && <DeleteOnTheService root={repo.root} files={deleting} choices={choices} />}
      {notHere.data && notHere.data.skipped.length > 0 && (
        <p className="muted">
          {plural(notHere.data.skipped.length, 'file')} not written: {notHere.data.skipped[0]!.reason}
          {notHere.data.skipped.length > 1 ? ', …' : ''}
        </p>
      )}
    </div>
  );
}

/** The dialog that names each file Delete them on the service would delete, on the versions listed. */
function DeleteOnTheService(props: { root: string; files: NotInCheckoutFile[]; choices: WaitingChoices }) {
  const { files: deleting } = props;
  const { notHere, setDeleting, busy } = props.choices;
  const dialogId = `${waitingId(props.root)}-delete`;
  return (
    <div role="dialog" aria-modal="true" aria-labelledby={dialogId} className="confirm">
      <p id={dialogId}>
        {deleting.length === 0
          ? 'Every file on the service is in this checkout now: nothing to delete.'
          : `Delete these ${plural(deleting.length, 'file')} on the service? Each stays in the service's history; a file changed there since is not deleted.`}
      </p>
      <ul aria-label="Files to delete on the service" className="listed">
        {deleting.map((file) => (
          <li key={`${file.flowPath}/${file.path}`}>
            <code>
              {file.flowPath}/{file.path}
            </code>{' '}
            <span className="muted">
              {file.writtenBy ? `by ${file.writtenBy}, ` : ''}
              {new Date(file.writtenAt).toLocaleString()}
            </span>
          </li>
        ))}
      </ul>
      <div className="row">
        {deleting.length > 0 && (
          <button
            disabled={busy}
            onClick={() =>
              notHere.mutate({
                choice: 'delete',
                files: deleting.map(({ flowPath, path, hash }) => ({ flowPath, path, hash })),
              })
            }
          >
            {deleting.length === 1
              ? 'Delete it on the service'
              : `Delete these ${deleting.length} on the service`}
          </button>
        )}
        <button onClick={() => setDeleting(null)}>Cancel</button>
      </div>
    </div>
  );
}
