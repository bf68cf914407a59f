import { keepPreviousData, useMutation, useQuery } from '@tanstack/react-query';
import { useState } from 'react';
import type { AgentApi, RepositoryView } from '../../../../src/window/index.ts';
import { incomingCounts, type IncomingChange } from '../../../../src/protocol/index.ts';
import { waitingId } from '../../notifications.ts';
import { plural } from '../../plural.ts';
import { ErrorLine } from '../common.tsx';
import { NotWritten } from './NotWritten.tsx';

/**
 * Files newer on the service and untouched here (a teammate's edits): not a conflict, and not "synced"
 * either; one action, Take them, which writes the service's copies to disk and touches nothing changed here (a file
 * edited meanwhile is not written, and said). When it would delete or overwrite more files here than the
 * repository deletes without asking, the agent takes none and lists them: a dialog names each, and only that list,
 * on those versions, is taken on its user's word (one click must not delete 217 files of a checkout).
 */
export function Newer(props: { api: AgentApi; repo: RepositoryView; version: string; onChange: () => void }) {
  const { api, repo, onChange } = props;
  const root = repo.root;
  const listed = useQuery({
    queryKey: ['newer', root, props.version],
    queryFn: () => api.conflicts({ root }),
    placeholderData: keepPreviousData,
  });
  /** The files a take would delete or overwrite, listed for its user to confirm (null: not asked). */
  const [asked, setAsked] = useState<AskedFile[] | null>(null);
  const take = useMutation({
    mutationFn: (files?: AskedFile[]) =>
      api.takeNewer({
        root,
        ...(files && {
          confirmed: true,
          files: files.map(({ flowPath, path, serviceHash }) => ({ flowPath, path, serviceHash })),
        }),
      }),
    onSuccess: (result) => setAsked(result.asked.length > 0 ? result.asked : null),
    onSettled: onChange,
  });
  const newer = listed.data?.newer ?? [];
  const dialogId = `${waitingId(root)}-take`;
  const writers = [...new Set(newer.map((file) => file.writtenBy).filter((by) => by !== null))].sort();
  return (
    <section className="newer" aria-label={`Newer on the service in ${repo.owner}/${repo.name}`}>
      <p>
        {plural(repo.counts.behind, 'file')} newer on the service
        {writers.length > 0 ? `, by ${writers.join(', ')}` : ''}: your changes are sent, and these are not
        here yet.
      </p>
      <ul className="files">
        {newer.slice(0, 10).map((file) => (
          <li key={`${file.flowPath}/${file.path}`}>
            <code>
              {file.flowPath}/{file.path}
            </code>
            {file.serviceHash === null ? ' (deleted there)' : ''}
          </li>
        ))}
        {newer.length > 10 && <li>… and {newer.length - 10} more</li>}
      </ul>
      <button disabled={take.isPending || repo.paused} onClick={() => take.mutate(undefined)}>
        Take them
      </button>
      {asked !== null && (
        <div role="dialog" aria-modal="true" aria-labelledby={dialogId} className="confirm">
          <p id={dialogId}>
            Take these {plural(asked.length, 'file')} from the service? {incomingCounts(asked)}: more than
            this repository takes without asking. Each version here stays in the service's history.
          </p>
          <ul aria-label="Files to take from the service" className="listed">
            {asked.map((file) => (
              <li key={`${file.flowPath}/${file.path}`}>
                <code>
                  {file.flowPath}/{file.path}
                </code>{' '}
                <span className="muted">
                  {TAKE_SAYS[file.change]}
                  {file.writtenBy ? ` by ${file.writtenBy}` : ''}
                </span>
              </li>
            ))}
          </ul>
          <div className="row">
            <button disabled={take.isPending || repo.paused} onClick={() => take.mutate(asked)}>
              {asked.length === 1 ? 'Take it' : `Take these ${asked.length}`}
            </button>
            <button onClick={() => setAsked(null)}>Cancel</button>
          </div>
        </div>
      )}
      <ErrorLine error={listed.error ?? take.error} />
      <NotWritten files={take.data?.notWritten ?? []} />
    </section>
  );
}

/** What a take does to each file listed in its dialog. */
const TAKE_SAYS: Record<IncomingChange, string> = {
  deleted: 'deleted here (deleted on the service)',
  replaced: 'replaced (changed on the service)',
  written: 'written (not here)',
};

type AskedFile = {
  flowPath: string;
  path: string;
  change: IncomingChange;
  serviceHash: string | null;
  writtenBy: string | null;
};
