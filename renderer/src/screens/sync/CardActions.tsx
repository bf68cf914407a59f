import type { RepositoryView } from '../../../../src/window/index.ts';

/** What a card's buttons ask the agent to do with its repository. */
export type CardAction = 'sync' | 'pause' | 'resume' | 'remove' | 'source' | 'rename';

/**
 * Sync now, Pause or Resume, and Remove, named with the card (two checkouts of one repository have the same
 * owner/name). A checkout synced from another has neither Sync now nor Pause: it is not synced.
 */
export function CardActions(props: {
  repo: RepositoryView;
  name: string;
  act: (action: CardAction) => void;
  busy: boolean;
}) {
  const { repo, name, act } = props;
  const notSource = repo.syncedFrom !== null;
  const stopped =
    repo.paused || repo.phase === 'paused' || repo.phase === 'stopped' || repo.phase === 'elsewhere';
  return (
    <div className="row">
      {!notSource && (
        <button onClick={() => act('sync')} disabled={stopped || props.busy} aria-label={`Sync now: ${name}`}>
          Sync now
        </button>
      )}
      {notSource ? null : repo.paused || repo.phase === 'paused' ? (
        <button onClick={() => act('resume')} aria-label={`Resume ${name}`}>
          Resume
        </button>
      ) : (
        <button onClick={() => act('pause')} disabled={repo.phase === 'stopped'} aria-label={`Pause ${name}`}>
          Pause
        </button>
      )}
      <button
        aria-label={`Remove ${name}`}
        onClick={() => {
          if (window.confirm(`Stop syncing ${name}? The service keeps what it has.`)) act('remove');
        }}
      >
        Remove
      </button>
    </div>
  );
}
