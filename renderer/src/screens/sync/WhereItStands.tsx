import type { RepositoryView } from '../../../../src/window/index.ts';
import { plural } from '../../plural.ts';
import type { CardAction } from './CardActions.tsx';

/**
 * Where the repository's syncing stands, in lines: the agent's message, paused since when, another checkout its
 * source, a rename on the service, the progress of a first sync, the last sync, and the repository config's
 * problems.
 */
export function WhereItStands(props: {
  repo: RepositoryView;
  act: (action: CardAction) => void;
  busy: boolean;
}) {
  const { repo, act, busy } = props;
  const { counts } = repo;
  return (
    <>
      {repo.message && <p className="muted">{repo.message}</p>}
      {repo.paused && (
        <p data-testid="paused">
          Paused{repo.pausedSince ? ` since ${new Date(repo.pausedSince).toLocaleString()}` : ''}:{' '}
          {counts.pending > 0
            ? `${plural(counts.pending, 'change')} waiting, sent when you resume.`
            : 'changes are counted here and sent when you resume.'}
        </p>
      )}
      {repo.syncedFrom && (
        <button onClick={() => act('source')} disabled={busy}>
          Sync from this checkout instead
        </button>
      )}
      {repo.rename && (
        <p data-testid="rename">
          {repo.rename.message}{' '}
          <button onClick={() => act('rename')} disabled={busy}>
            Sync as {repo.rename.to}
          </button>
        </p>
      )}
      {repo.progress && (
        <label className="progress">
          {repo.progress.stage === 'hashing' ? 'Hashing files' : 'Uploading flows'}
          <progress max={repo.progress.total} value={repo.progress.done} />
        </label>
      )}
      <p className="muted">
        Last sync: {repo.lastSyncAt ? new Date(repo.lastSyncAt).toLocaleString() : 'never'}
      </p>
      {repo.configProblem && (
        <p className="error" data-testid="config-problem">
          {repo.configProblem}
        </p>
      )}
      {repo.configNotSent && <p className="muted">{repo.configNotSent}</p>}
    </>
  );
}
