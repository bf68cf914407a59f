import { keepPreviousData, useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useState, type FormEvent } from 'react';
import type { AgentApi, ConflictView, FlowView, RepositoryView } from '../../../src/window/index.ts';
import {
  changeSetWords,
  hereSide,
  incomingCounts,
  inSyncOf,
  needsOf,
  warnedPath,
  type HereSide,
  type IncomingChange,
} from '../../../src/protocol/index.ts';
import { repositoryId, waitingId } from '../notifications.ts';
import { plural } from '../plural.ts';
import { CompareConflict, FileHistory, FindHistory, serviceSide } from './FileHistory.tsx';
import { GitChanges } from './GitChanges.tsx';
import { RecentActivity } from './RecentActivity.tsx';
import { ErrorLine, useStatus, type ScreenProps } from './common.tsx';

export function SyncScreen({ api }: ScreenProps) {
  const status = useStatus(api);
  const queries = useQueryClient();
  const refresh = () => queries.invalidateQueries({ queryKey: ['status'] });
  const [folder, setFolder] = useState('');
  const add = useMutation({
    mutationFn: (path: string) => api.addRepository({ path }),
    onSuccess: () => {
      setFolder('');
      void refresh();
    },
  });
  const onAdd = (event: FormEvent) => {
    event.preventDefault();
    if (folder.trim()) add.mutate(folder.trim());
  };

  return (
    <section aria-labelledby="sync-title">
      <h2 id="sync-title">Sync</h2>
      {/* There before the status is: a line that appeared above the form would move it under the pointer. */}
      <p className="muted" data-testid="service">
        Service: {status.data ? `${status.data.serviceUrl}${status.data.embedded ? ' (embedded)' : ''}` : '…'}
      </p>
      <ErrorLine error={status.error} />
      <form onSubmit={onAdd} aria-busy={!status.data}>
        <fieldset className="plain row" disabled={!status.data}>
          <label htmlFor="add-folder">Repository folder</label>
          <input
            id="add-folder"
            value={folder}
            onChange={(event) => {
              setFolder(event.target.value);
              if (add.error) add.reset();
            }}
            placeholder="/home/you/code/app"
          />
          <button type="submit" disabled={add.isPending}>
            {add.isPending ? 'Adding…' : 'Add folder'}
          </button>
        </fieldset>
      </form>
      <ErrorLine error={add.error} />
      {/* Below the form: a line that appears later does not move it under the pointer. */}
      {status.data?.serviceLimits && (
        <p className="warning" data-testid="service-limits">
          {status.data.serviceLimits}
        </p>
      )}
      {status.data?.repositories.length === 0 && <p>No repository yet: add a folder above.</p>}
      <ul className="repositories">
        {status.data?.repositories.map((repo, _, all) => (
          <Repository key={repo.root} repo={repo} name={cardName(repo, all)} api={api} onChange={refresh} />
        ))}
      </ul>
      <RecentActivity api={api} />
    </section>
  );
}

/**
 * How a card is named to a screen reader and in its dialogs: owner/name, with its folder when another card has the
 * same owner/name (two checkouts of one repository, a worktree): two regions "Waiting for you in acme/app" were
 * one name for two places (axe: landmark-unique), and Remove asked to stop syncing "acme/app" without saying which.
 */
export function cardName(repo: RepositoryView, all: readonly RepositoryView[]): string {
  const name = `${repo.owner}/${repo.name}`;
  const twin = all.some((other) => other.root !== repo.root && `${other.owner}/${other.name}` === name);
  return twin ? `${name} (${repo.root})` : name;
}

/** Busy repositories change at every step: their flows are read again once the work settles. */
function settledVersion(repo: RepositoryView): string {
  if (repo.phase === 'scanning' || repo.phase === 'syncing') return 'busy';
  const { counts } = repo;
  return [
    repo.phase,
    repo.lastSyncAt,
    counts.files,
    counts.pending,
    counts.warnings,
    counts.rejected,
    counts.conflicts,
    counts.behind,
    repo.heldDeletions,
    repo.notInCheckout,
    (repo.gitChanges ?? []).map(changeSetWords).join(';'),
  ].join('|');
}

function Repository({
  repo,
  name,
  api,
  onChange,
}: {
  repo: RepositoryView;
  /** The card's name (cardName): owner/name, with the folder when another card has the same. */
  name: string;
  api: AgentApi;
  onChange: () => void;
}) {
  const act = useMutation({
    mutationFn: async (action: 'sync' | 'pause' | 'resume' | 'remove' | 'source' | 'rename') => {
      if (action === 'sync') await api.syncNow({ root: repo.root });
      if (action === 'source') await api.addRepository({ path: repo.root, source: true });
      if (action === 'rename') await api.addRepository({ path: repo.root, rename: true });
      if (action === 'pause') await api.pauseRepository({ root: repo.root });
      if (action === 'resume') await api.resumeRepository({ root: repo.root });
      if (action === 'remove') await api.removeRepository({ root: repo.root });
    },
    onSettled: onChange,
  });
  const version = settledVersion(repo);
  const detail = useQuery({
    queryKey: ['detail', repo.root, version],
    queryFn: () => api.repositoryDetail({ root: repo.root }),
    enabled: version !== 'busy',
    placeholderData: keepPreviousData,
  });
  const { counts } = repo;
  const label = `${repo.owner}/${repo.name}`;
  const stopped =
    repo.paused || repo.phase === 'paused' || repo.phase === 'stopped' || repo.phase === 'elsewhere';
  const waiting = needsOf(repo);
  // At rest, the badge says the verdict every place says (inSyncOf): `in sync` only when it is, else `waiting for
  // you`, `behind` (files newer on the service), `pending`; "idle" said nothing of these (issue 46). A busy or
  // troubled engine says its phase. Another checkout is its source: not synced, which is not paused.
  const notSource = repo.syncedFrom !== null;
  // A refused token is "signed out" (issue 48: a member removed, a token revoked or expired): what to fix.
  const badge = notSource
    ? 'not synced'
    : repo.phase === 'idle'
      ? inSyncOf(repo).state
      : repo.phase === 'unauthorized'
        ? 'signed out'
        : repo.phase;
  return (
    // Focusable from a notification's click (tabIndex -1: not a stop of its own for Tab).
    <li className="repository" aria-label={name} id={repositoryId(repo.root)} tabIndex={-1}>
      <div className="row">
        <h3>{label}</h3>
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
      <p className="muted">{repo.root}</p>
      <p data-testid="counts">
        {plural(counts.flows, 'flow')} · {plural(counts.files, 'file')} · {counts.pending} pending ·{' '}
        {counts.warnings} not sent
        {counts.rejected > 0 ? ` · ${counts.rejected} refused` : ''}
        {counts.conflicts > 0 ? ` · ${counts.conflicts} in conflict` : ''}
        {counts.behind > 0 ? ` · ${counts.behind} newer on the service` : ''}
        {repo.heldDeletions > 0 ? ` · ${plural(repo.heldDeletions, 'deletion')} held` : ''}
      </p>
      {counts.behind > 0 && <Newer api={api} repo={repo} version={version} onChange={onChange} />}
      {waiting.some((need) => need.kind !== 'repo-config') && (
        <WaitingForYou api={api} repo={repo} name={name} version={version} onChange={onChange} />
      )}
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
        <button onClick={() => act.mutate('source')} disabled={act.isPending}>
          Sync from this checkout instead
        </button>
      )}
      {repo.rename && (
        <p data-testid="rename">
          {repo.rename.message}{' '}
          <button onClick={() => act.mutate('rename')} disabled={act.isPending}>
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
      <ErrorLine error={detail.error} />
      {detail.data && detail.data.flows.length > 0 && (
        <Flows api={api} root={repo.root} flows={detail.data.flows} version={version} onChange={onChange} />
      )}
      {detail.data && detail.data.flows.length > 0 && (
        <FindHistory api={api} root={repo.root} version={version} onChange={onChange} />
      )}
      {repo.warnings.length > 0 && (
        <details>
          <summary>{plural(repo.warnings.length, 'file')} not sent</summary>
          <ul className="files">
            {repo.warnings.map((w) => (
              <li key={warnedPath(w)}>
                <code>{warnedPath(w)}</code>: {w.reason}
              </li>
            ))}
          </ul>
        </details>
      )}
      <div className="row">
        {!notSource && (
          <button
            onClick={() => act.mutate('sync')}
            disabled={stopped || act.isPending}
            aria-label={`Sync now: ${name}`}
          >
            Sync now
          </button>
        )}
        {notSource ? null : repo.paused || repo.phase === 'paused' ? (
          <button onClick={() => act.mutate('resume')} aria-label={`Resume ${name}`}>
            Resume
          </button>
        ) : (
          <button
            onClick={() => act.mutate('pause')}
            disabled={repo.phase === 'stopped'}
            aria-label={`Pause ${name}`}
          >
            Pause
          </button>
        )}
        <button
          aria-label={`Remove ${name}`}
          onClick={() => {
            if (window.confirm(`Stop syncing ${name}? The service keeps what it has.`)) act.mutate('remove');
          }}
        >
          Remove
        </button>
      </div>
      <ErrorLine error={act.error} />
    </li>
  );
}

const FLOW_STATES: Record<FlowView['state'], string> = {
  synced: 'synced',
  pending: 'pending',
  refused: 'refused',
  'not-sent': 'not sent',
  conflict: 'conflict',
  newer: 'newer on the service',
};

/**
 * Files newer on the service and untouched here (a teammate's edits, issue 41): not a conflict, and not "synced"
 * either; one action, Take them, which writes the service's copies to disk and touches nothing changed here (a file
 * edited meanwhile is not written, and said). When it would delete or overwrite more files here than the
 * repository deletes without asking, the agent takes none and lists them: a dialog names each, and only that list,
 * on those versions, is taken on its user's word (issue 46: one click deleted 217 files of a checkout).
 */
function Newer(props: { api: AgentApi; repo: RepositoryView; version: string; onChange: () => void }) {
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

/**
 * What waits for the user in one repository: each file in conflict (who changed the service's version, when),
 * with Keep mine and Take the service's, per file and for all; deletions held, with Delete them on the service
 * and Restore them on disk; git's change sets held (GitChanges). Nothing here is ever called "in sync".
 */
function WaitingForYou(props: {
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
  const resolve = useMutation({
    mutationFn: (input: { side: 'mine' | 'theirs'; files?: { flowPath: string; path: string }[] }) =>
      api.resolveConflicts({ root, ...input }),
    onSettled: onChange,
  });
  const deletions = useMutation({
    mutationFn: (choice: 'delete' | 'restore') => api.settleDeletions({ root, choice }),
    onSettled: onChange,
  });
  const notHere = useMutation({
    mutationFn: (input: { choice: 'delete' | 'restore'; files?: SeenFile[] }) =>
      api.settleNotInCheckout({ root, ...input, ...(input.choice === 'delete' && { confirmed: true }) }),
    onSettled: () => {
      setDeleting(null);
      onChange();
    },
  });
  /** The files "Delete them on the service" would delete, listed for its user to confirm (null: not asked). */
  const [deleting, setDeleting] = useState<NotInCheckoutFile[] | null>(null);
  const listNotHere = useMutation({
    mutationFn: () => api.notInCheckout({ root }),
    onSuccess: ({ files }) => setDeleting(files),
  });
  const busy = resolve.isPending || deletions.isPending || notHere.isPending || listNotHere.isPending;
  /**
   * Settles conflicts once its user said so: taking the service's version, and any action on more than one file,
   * asks first (issue 41: one click replaced an edit with no word). What was on disk is kept before it is replaced.
   */
  const settle = (side: 'mine' | 'theirs', files?: { flowPath: string; path: string }[]) => {
    const what =
      files?.length === 1
        ? `${files[0]!.flowPath}/${files[0]!.path}`
        : plural(files?.length ?? list.length, 'file');
    const question =
      side === 'theirs'
        ? `Take the service's version of ${what}? What is on disk here is kept first: in the service's history as your conflict copy (or beside the file, on a service that keeps none).`
        : `Send yours for ${what} on top of the service's? The service's version stays in its history.`;
    if (side === 'mine' && files?.length === 1) return resolve.mutate({ side, files });
    if (window.confirm(question)) resolve.mutate({ side, ...(files && { files }) });
  };
  const settleHeld = (choice: 'delete' | 'restore') => {
    const question =
      choice === 'delete'
        ? `Delete the ${plural(repo.heldDeletions, 'file')} on the service? Each stays in the service's history.`
        : `Put the ${plural(repo.heldDeletions, 'file')} back on disk from the service's copy? A file written there since is kept first.`;
    if (window.confirm(question)) deletions.mutate(choice);
  };
  const list = conflicts.data?.conflicts ?? [];
  const [comparing, setComparing] = useState<string | null>(null);
  // A flow's conflicts settled at once (when there are several flows: one flow's are "all").
  const byFlow = [...groupByFlow(list).entries()];
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
      {list.length > 0 && (
        <table className="conflicts">
          <caption>
            {plural(list.length, 'file')} changed on the service since this checkout synced{' '}
            {list.length === 1 ? 'it' : 'them'}: not sent until you choose
          </caption>
          <thead>
            <tr>
              <th scope="col">File</th>
              <th scope="col">On the service</th>
              <th scope="col">Here</th>
              <th scope="col">
                <span className="visually-hidden">Actions</span>
              </th>
            </tr>
          </thead>
          <tbody>
            {list.map((conflict) => {
              const file = `${conflict.flowPath}/${conflict.path}`;
              const diffId = `compare-${root}-${file}`.replace(/[^\w-]/g, '_');
              return [
                <tr key={file}>
                  <th scope="row">
                    <code>
                      {conflict.flowPath}/{conflict.path}
                    </code>
                  </th>
                  <td>{serviceSide(conflict)}</td>
                  <td>
                    {/* No base: never synced from this checkout (a worktree made the source): not an edit here. */}
                    {/* Of the disk now (issue 46), never of what was sent: an edit made while behind is "changed". */}
                    {conflict.lost
                      ? 'the only copy may be here: the service lost the version synced here'
                      : HERE[hereSide({ disk: conflict.diskHash, base: conflict.baseHash })]}
                  </td>
                  <td className="row">
                    {/* Named with their file: a row's buttons read alone ("Keep mine") say nothing of which. */}
                    <button
                      aria-expanded={comparing === file}
                      aria-controls={comparing === file ? diffId : undefined}
                      aria-label={`Compare ${file}`}
                      onClick={() => setComparing(comparing === file ? null : file)}
                    >
                      Compare
                    </button>
                    <button
                      disabled={busy || repo.paused}
                      aria-label={`Keep mine for ${file}`}
                      onClick={() => settle('mine', [fileOf(conflict)])}
                    >
                      Keep mine
                    </button>
                    {/* Never offered for a version the service lost: it would age or delete the only copy. */}
                    {!conflict.lost && (
                      <button
                        disabled={busy || repo.paused}
                        aria-label={`Take the service's for ${file}`}
                        onClick={() => settle('theirs', [fileOf(conflict)])}
                      >
                        Take the service's
                      </button>
                    )}
                  </td>
                </tr>,
                comparing === file && (
                  <tr key={`${file} compared`} id={diffId}>
                    <td colSpan={4}>
                      <CompareConflict api={api} root={root} conflict={conflict} version={props.version} />
                    </td>
                  </tr>
                ),
              ];
            })}
          </tbody>
        </table>
      )}
      {byFlow.length > 1 &&
        byFlow
          .filter(([, files]) => files.length > 1)
          .map(([flowPath, files]) => (
            <div className="row" key={flowPath}>
              <button disabled={busy || repo.paused} onClick={() => settle('mine', files)}>
                Keep mine for the {files.length} in {flowPath}
              </button>
              <button disabled={busy || repo.paused} onClick={() => settle('theirs', files)}>
                Take the service's for the {files.length} in {flowPath}
              </button>
            </div>
          ))}
      {list.length > 1 && (
        <div className="row">
          <button disabled={busy || repo.paused} onClick={() => settle('mine')}>
            Keep mine for all {list.length}
          </button>
          <button disabled={busy || repo.paused} onClick={() => settle('theirs')}>
            Take the service's for all {list.length}
          </button>
        </div>
      )}
      {repo.heldDeletions > 0 && (
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
      )}
      {(repo.gitChanges ?? []).length > 0 && (
        <GitChanges api={api} repo={repo} name={props.name} version={props.version} onChange={onChange} />
      )}
      {repo.notInCheckout > 0 && (
        <div role="group" aria-label="Files on the service not in this checkout">
          <p>
            {plural(repo.notInCheckout, 'file')} on the service {repo.notInCheckout === 1 ? 'is' : 'are'} not
            in this checkout (written by another checkout, or before this one was made): kept there until you
            choose.
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
          {deleting !== null && (
            <div
              role="dialog"
              aria-modal="true"
              aria-labelledby={`${waitingId(root)}-delete`}
              className="confirm"
            >
              <p id={`${waitingId(root)}-delete`}>
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
          )}
          {notHere.data && notHere.data.skipped.length > 0 && (
            <p className="muted">
              {plural(notHere.data.skipped.length, 'file')} not written: {notHere.data.skipped[0]!.reason}
              {notHere.data.skipped.length > 1 ? ', …' : ''}
            </p>
          )}
        </div>
      )}
    </section>
  );
}

/** The "Here" column of a file in conflict, from the disk as it is now (hereSide). */
const HERE: Record<HereSide, string> = {
  deleted: 'deleted',
  'never synced': 'another version (never synced from here)',
  unchanged: 'unchanged (behind)',
  changed: 'changed',
};

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
type SeenFile = { flowPath: string; path: string; hash: string };
type NotInCheckoutFile = SeenFile & { writtenBy: string | null; writtenAt: string };

function groupByFlow(conflicts: readonly ConflictView[]): Map<string, { flowPath: string; path: string }[]> {
  const flows = new Map<string, { flowPath: string; path: string }[]>();
  for (const conflict of conflicts)
    flows.set(conflict.flowPath, [...(flows.get(conflict.flowPath) ?? []), fileOf(conflict)]);
  return flows;
}

function fileOf(conflict: ConflictView): { flowPath: string; path: string } {
  return { flowPath: conflict.flowPath, path: conflict.path };
}

function Flows(props: {
  api: AgentApi;
  root: string;
  flows: FlowView[];
  version: string;
  onChange: () => void;
}) {
  const [open, setOpen] = useState<ReadonlySet<string>>(new Set());
  const toggle = (flowPath: string) =>
    setOpen((current) => {
      const next = new Set(current);
      if (!next.delete(flowPath)) next.add(flowPath);
      return next;
    });
  return (
    <table className="flows">
      <caption className="visually-hidden">Flows</caption>
      <thead>
        <tr>
          <th scope="col">Flow</th>
          <th scope="col">Files</th>
          <th scope="col">State</th>
        </tr>
      </thead>
      {props.flows.map((flow) => {
        const expanded = open.has(flow.flowPath);
        const filesId = `files-${props.root}-${flow.flowPath}`.replace(/[^\w-]/g, '_');
        return (
          <tbody key={flow.flowPath}>
            <tr>
              <th scope="row">
                <button
                  className="disclosure"
                  aria-expanded={expanded}
                  aria-controls={expanded ? filesId : undefined}
                  onClick={() => toggle(flow.flowPath)}
                  title={flow.flowPath}
                >
                  {flow.name}
                </button>
              </th>
              <td>{flow.files}</td>
              <td>
                <span className={`state state-${flow.state}`}>{FLOW_STATES[flow.state]}</span>
                {flow.state === 'pending' && ` (${flow.pending})`}
                {flow.state !== 'not-sent' && flow.notSent > 0 && ` · ${flow.notSent} not sent`}
                {flow.message && <span className="error">: {flow.message}</span>}
              </td>
            </tr>
            {expanded && (
              <tr id={filesId}>
                <td colSpan={3}>
                  <FlowFiles
                    api={props.api}
                    root={props.root}
                    flow={flow}
                    version={props.version}
                    onChange={props.onChange}
                  />
                </td>
              </tr>
            )}
          </tbody>
        );
      })}
    </table>
  );
}

function FlowFiles(props: {
  api: AgentApi;
  root: string;
  flow: FlowView;
  version: string;
  onChange: () => void;
}) {
  const { root, flow } = props;
  const [showing, setShowing] = useState<string | null>(null);
  const files = useQuery({
    queryKey: ['flowFiles', root, flow.flowPath, props.version],
    queryFn: () => props.api.flowFiles({ root, flowPath: flow.flowPath }),
    placeholderData: keepPreviousData,
  });
  if (files.error) return <ErrorLine error={files.error} />;
  if (!files.data) return <p className="muted">Reading the files of {flow.name}…</p>;
  return (
    <ul className="files" aria-label={`Files of ${flow.name}`}>
      {files.data.files.map((file) => {
        const repoPath = flow.flowPath === '' ? file.path : `${flow.flowPath}/${file.path}`;
        return (
          <li key={file.path}>
            <code>{file.path}</code>{' '}
            <span className={`state state-${file.state}`}>{FILE_STATES[file.state]}</span>
            {file.reason && <span className="muted">: {file.reason}</span>}{' '}
            <button
              className="link"
              aria-label={`History of ${file.path}`}
              aria-expanded={showing === repoPath}
              onClick={() => setShowing(showing === repoPath ? null : repoPath)}
            >
              History
            </button>
            {showing === repoPath && (
              <FileHistory
                api={props.api}
                root={root}
                file={repoPath}
                version={props.version}
                onChange={props.onChange}
              />
            )}
          </li>
        );
      })}
    </ul>
  );
}

const FILE_STATES = {
  synced: 'synced',
  pending: 'pending',
  'not-sent': 'not sent',
  conflict: 'conflict',
  newer: 'newer on the service',
} as const;

/** Files whose service copy was not written to disk, a line each with why (the others were settled). */
/** Where what was on disk went before the service's version replaced it (Recent activity says it too). */
function Kept(props: { files: readonly { flowPath: string; path: string; where: string }[] }) {
  if (props.files.length === 0) return null;
  return (
    <ul role="status" aria-label="Your versions kept">
      {props.files.map((file) => (
        <li key={`${file.flowPath}/${file.path}`}>
          Yours of{' '}
          <code>
            {file.flowPath}/{file.path}
          </code>{' '}
          is {file.where}.
        </li>
      ))}
    </ul>
  );
}

function NotWritten(props: { files: readonly { flowPath: string; path: string; reason: string }[] }) {
  if (props.files.length === 0) return null;
  const shown = props.files.slice(0, 10);
  return (
    <div role="alert" className="error">
      <p>{plural(props.files.length, 'file')} not written, the others were:</p>
      <ul>
        {shown.map((file) => (
          <li key={`${file.flowPath}/${file.path}`}>
            <code>
              {file.flowPath}/{file.path}
            </code>
            : {file.reason}
          </li>
        ))}
        {props.files.length > shown.length && <li>… and {props.files.length - shown.length} more</li>}
      </ul>
    </div>
  );
}
