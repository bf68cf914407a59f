import { keepPreviousData, useMutation, useQuery } from '@tanstack/react-query';
import { useState } from 'react';
import type { AgentApi, RepositoryView } from '../../../src/window/index.ts';
import { changeSetWords, type GitChangeSetView } from '../../../src/protocol/index.ts';
import { waitingId } from '../notifications.ts';
import { plural } from '../plural.ts';
import { ErrorLine } from './common.tsx';

/**
 * Git's change sets held for their user on a shared service: a branch switch, `git checkout -- .`, a
 * reset made these changes here, and the team's copy changes only by what people mean. Each set is a card with its
 * name (`branch cleanup: 1 changed, 6 deleted`), its files (folded: a branch may delete hundreds), and the two ways
 * out `flowsync sync --yes` and `--keep` are: Send to the team, which asks first, naming the branch and the
 * teammates whose copy it changes (the confirm names both), and Keep it here.
 */
export function GitChanges(props: {
  api: AgentApi;
  repo: RepositoryView;
  /** The card's name (cardName): owner/name, with its folder when another card has the same. */
  name: string;
  version: string;
  onChange: () => void;
}) {
  const { api, repo, onChange } = props;
  const root = repo.root;
  const held = useQuery({
    queryKey: ['gitChanges', root, props.version],
    queryFn: () => api.heldGitChanges({ root }),
    placeholderData: keepPreviousData,
  });
  /** The set whose Send asks its user now (null: none). */
  const [asking, setAsking] = useState<string | null>(null);
  const settle = useMutation({
    mutationFn: (input: { choice: 'send' | 'keep'; name: string }) =>
      api.settleGitChanges({ root, ...input }),
    onSettled: () => {
      setAsking(null);
      onChange();
    },
  });
  // The status says which sets wait now; the files come with the list, read again when the status changes.
  const waiting = new Set((repo.gitChanges ?? []).map((set) => set.name));
  const sets = (held.data?.sets ?? []).filter((set) => waiting.has(set.name));
  const teammates = held.data?.teammates ?? repo.teammates ?? [];
  return (
    <>
      <ErrorLine error={held.error ?? settle.error} />
      {sets.map((set, index) => {
        const dialogId = `${waitingId(root)}-git-${index}`;
        const files = set.files.length;
        return (
          <div role="group" aria-label={changeSetWords(set)} className="git-changes" key={set.name}>
            <p>
              <strong>{changeSetWords(set)}</strong>
            </p>
            <p className="muted">
              Git made these changes in this checkout: not sent to the team until you say so. Kept here, they
              stay as git left them and the team's versions stay on the service.
            </p>
            <details>
              <summary>{plural(files, 'file')}</summary>
              <ul className="listed" aria-label={`Files of ${set.name}`} tabIndex={0}>
                {set.files.map((file) => (
                  <li key={`${file.flowPath}/${file.path}`}>
                    <code>
                      {file.flowPath}/{file.path}
                    </code>{' '}
                    <span className={file.deleted ? 'state-conflict' : 'muted'}>
                      {file.deleted ? 'deleted' : 'changed'}
                    </span>
                  </li>
                ))}
              </ul>
            </details>
            <div className="row">
              <button
                aria-haspopup="dialog"
                disabled={settle.isPending || repo.paused}
                onClick={() => setAsking(set.name)}
              >
                Send to the team
              </button>
              <button
                disabled={settle.isPending}
                onClick={() => settle.mutate({ choice: 'keep', name: set.name })}
              >
                Keep it here
              </button>
            </div>
            {asking === set.name && (
              <div
                role="dialog"
                aria-modal="true"
                aria-labelledby={dialogId}
                aria-describedby={`${dialogId}-what`}
                className="confirm"
              >
                <p id={dialogId}>
                  <strong>Send the changes of {set.name} to the team?</strong>
                </p>
                <p id={`${dialogId}-what`}>
                  On the service, for everyone who syncs {props.name} whatever branch they are on:{' '}
                  {sentWords(set)}. Each version replaced stays in the service's history.
                  {teammates.length > 0 && ` Your teammates there: ${listed(teammates)}.`}
                </p>
                <div className="row">
                  <button
                    disabled={settle.isPending}
                    onClick={() => settle.mutate({ choice: 'send', name: set.name })}
                  >
                    Send {plural(files, 'file')}
                  </button>
                  {/* Focused when asked: Enter or Space on it sends nothing. */}
                  <button autoFocus onClick={() => setAsking(null)}>
                    Cancel
                  </button>
                </div>
              </div>
            )}
          </div>
        );
      })}
    </>
  );
}

/** `1 changed, 6 deleted`: what the team's copy gets. */
function sentWords(set: GitChangeSetView): string {
  return changeSetWords(set).slice(set.name.length + 2);
}

/** `Ada`, `Ada and Bob`, `Ada, Bob and Carl`. */
function listed(names: readonly string[]): string {
  if (names.length <= 1) return names.join('');
  return `${names.slice(0, -1).join(', ')} and ${names.at(-1)!}`;
}
