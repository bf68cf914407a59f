import type { RepositoryView } from '../../../../src/window/index.ts';
import { inSyncOf, needsOf, stateWord, type SyncState } from '../../../../src/protocol/index.ts';

/** The card's heading: owner/name, its branch, and a badge with the word for its state. */
export function RepositoryHeading({ repo }: { repo: RepositoryView }) {
  const state = stateOf(repo);
  const waiting = needsOf(repo);
  return (
    <div className="row">
      <h3>{`${repo.owner}/${repo.name}`}</h3>
      {repo.branch && (
        <span className="muted" data-testid="branch">
          {repo.branch}
        </span>
      )}
      <span
        className={`phase phase-${repo.phase}${state === 'waiting for you' ? ' phase-waiting' : ''}`}
        data-testid="phase"
        title={state === 'waiting for you' ? waiting.map((need) => need.words).join(', ') : undefined}
      >
        {stateWord(state)}
      </span>
    </div>
  );
}

// The badge says the verdict every place says (inSyncOf), in the one word each place uses for it (stateWord): the
// tray says `sending` and `newer on the service` where a badge of the engine's phase said `syncing` and `behind`.
// Another checkout is its source: not synced, which is not paused.
function stateOf(repo: RepositoryView): SyncState {
  return repo.syncedFrom !== null ? 'not synced' : inSyncOf(repo).state;
}
