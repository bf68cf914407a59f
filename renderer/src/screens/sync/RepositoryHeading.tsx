import type { RepositoryView } from '../../../../src/window/index.ts';
import { inSyncOf, needsOf } from '../../../../src/protocol/index.ts';

/** The card's heading: owner/name, its branch, and a badge with the word for its state. */
export function RepositoryHeading({ repo }: { repo: RepositoryView }) {
  const badge = badgeOf(repo);
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
        className={`phase phase-${repo.phase}${badge === 'waiting for you' ? ' phase-waiting' : ''}`}
        data-testid="phase"
        title={badge === 'waiting for you' ? waiting.map((need) => need.words).join(', ') : undefined}
      >
        {badge}
      </span>
    </div>
  );
}

// At rest, the badge says the verdict every place says (inSyncOf): `in sync` only when it is, else `waiting for
// you`, `behind` (files newer on the service), `pending`; "idle" said nothing of these. A busy or
// troubled engine says its phase. Another checkout is its source: not synced, which is not paused.
function badgeOf(repo: RepositoryView): string {
  if (repo.syncedFrom !== null) return 'not synced';
  if (repo.phase === 'idle') return inSyncOf(repo).state;
  // A refused token is "signed out" (a member removed, a token revoked or expired): what to fix.
  return repo.phase === 'unauthorized' ? 'signed out' : repo.phase;
}
