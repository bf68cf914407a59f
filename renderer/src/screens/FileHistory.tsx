import { keepPreviousData, useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import type { AgentApi, ConflictView } from '../../../src/window/index.ts';
import { cappedLine } from '../../../src/protocol/index.ts';
import { plural } from '../plural.ts';
import { ErrorLine } from './common.tsx';

// A file's versions (listed, shown, restored) and a conflict compared: the Sync screen's views of the history.

/**
 * A conflict as two diffs from the version last synced here: what changed on the service (by whom) and what
 * changed here, so that the choice between the two is made on what they are, not on who made them.
 */
export function CompareConflict(props: {
  api: AgentApi;
  root: string;
  conflict: ConflictView;
  version: string;
}) {
  const { api, root, conflict } = props;
  const compared = useQuery({
    queryKey: ['compare', root, conflict.flowPath, conflict.path, props.version],
    queryFn: () => api.compareConflict({ root, flowPath: conflict.flowPath, path: conflict.path }),
  });
  if (compared.error) return <ErrorLine error={compared.error} />;
  if (!compared.data) return <p className="muted">Reading both versions…</p>;
  return (
    <div className="compare">
      <Diff title={`On the service (${serviceSide(conflict)})`} diff={compared.data.toService} />
      <Diff title="Here" diff={compared.data.toDisk} />
    </div>
  );
}

/** A unified diff, its lines marked added or removed in words too (for a screen reader, and in a high contrast). */
function Diff({ title, diff }: { title: string; diff: { diff: string } | { missing: string } }) {
  return (
    <figure className="diff">
      <figcaption>{title}</figcaption>
      {'missing' in diff ? (
        <p className="muted">{diff.missing}</p>
      ) : diff.diff === '' ? (
        <p className="muted">No change from the version last synced here.</p>
      ) : (
        // Focusable: a long diff scrolls, and the keyboard must reach it (axe: scrollable-region-focusable).
        <pre tabIndex={0}>
          {diff.diff.split('\n').map((line, index) => (
            <span key={index} className={diffLineClass(line)}>
              {line}
              {'\n'}
            </span>
          ))}
        </pre>
      )}
    </figure>
  );
}

function diffLineClass(line: string): string {
  if (line.startsWith('+++') || line.startsWith('---')) return 'diff-file';
  if (line.startsWith('@@')) return 'diff-hunk';
  if (line.startsWith('+')) return 'diff-added';
  if (line.startsWith('-')) return 'diff-removed';
  return 'diff-same';
}

/** What became of a restored version, in the words `flowsync restore` uses. */
function restoredOutcome(restored: {
  outcome: 'sent' | 'current' | 'conflict';
  serviceWrittenBy: string | null;
}) {
  if (restored.outcome === 'sent') return 'it is sent as your edit.';
  if (restored.outcome === 'current') return 'the service holds this version already, nothing to send.';
  const by = restored.serviceWrittenBy ? ` (by ${restored.serviceWrittenBy})` : '';
  return (
    `the service holds a newer version${by}: nothing is sent, it is a conflict. ` +
    "Settle it under Waiting for you: send this one on top, or take the service's."
  );
}

/**
 * Every version the service keeps of one file (newest first): when, who, size; each can be viewed, and restored,
 * which writes it to disk, from where it is sent as an edit (so a restore is itself a version, and can be undone).
 */
export function FileHistory(props: {
  api: AgentApi;
  root: string;
  file: string;
  version: string;
  onChange: () => void;
}) {
  const { api, root, file } = props;
  const queries = useQueryClient();
  // Read again when the repository's engine rests (`version`): a restored version, sent, is the newest one.
  const history = useQuery({
    queryKey: ['history', root, file, props.version],
    queryFn: () => api.fileHistory({ root, file }),
    placeholderData: keepPreviousData,
  });
  const [viewing, setViewing] = useState<number | null>(null);
  const restore = useMutation({
    mutationFn: (version: number) => api.restoreVersion({ root, file, version }),
    onSettled: () => {
      void queries.invalidateQueries({ queryKey: ['history', root, file] });
      props.onChange();
    },
  });
  if (history.error) return <ErrorLine error={history.error} />;
  if (!history.data) return <p className="muted">Reading the history of {file}…</p>;
  const { versions, capped } = history.data;
  // A history the size cap cut says so: versions missing from it were removed, not never written.
  const cut = capped && (
    <p className="muted" data-testid="history-capped">
      {cappedLine(capped)}
    </p>
  );
  if (versions.length === 0)
    return (
      <>
        <p className="muted">The service keeps no version of {file}.</p>
        {cut}
      </>
    );
  return (
    <div className="history">
      {cut}
      <table aria-label={`Versions of ${file}`}>
        <thead>
          <tr>
            <th scope="col">Version</th>
            <th scope="col">When</th>
            <th scope="col">Who</th>
            <th scope="col">Size</th>
            <th scope="col">
              <span className="visually-hidden">Actions</span>
            </th>
          </tr>
        </thead>
        <tbody>
          {versions.map((v) => (
            <tr key={v.version}>
              <th scope="row">
                {v.version}
                {v.current ? ' (current)' : ''}
                {v.conflictCopy ? ' (conflict copy)' : ''}
              </th>
              <td>{new Date(v.writtenAt).toLocaleString()}</td>
              <td>{v.writtenBy ?? 'not named'}</td>
              <td>{v.hash === null ? 'deleted' : plural(v.size, 'byte')}</td>
              <td className="row">
                {v.hash !== null && (
                  <button
                    aria-expanded={viewing === v.version}
                    aria-label={`View version ${v.version} of ${file}`}
                    onClick={() => setViewing(viewing === v.version ? null : v.version)}
                  >
                    View
                  </button>
                )}
                {!v.current && (
                  <button
                    disabled={restore.isPending}
                    aria-label={`Restore version ${v.version} of ${file}`}
                    onClick={() => {
                      const what =
                        v.hash === null
                          ? `Delete ${file} (version ${v.version} is a deletion)?`
                          : `Write version ${v.version} of ${file} to disk?`;
                      if (
                        window.confirm(
                          `${what} It is sent as your edit; the version there now stays in the history.`,
                        )
                      )
                        restore.mutate(v.version);
                    }}
                  >
                    Restore
                  </button>
                )}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
      <ErrorLine error={restore.error} />
      {restore.data && (
        <p role="status">
          Version {restore.data.version} {restore.data.deleted ? 'removed the file' : 'is on disk'}:{' '}
          {restoredOutcome(restore.data)}
          {restore.data.kept && ` What was on disk is ${restore.data.kept}.`}
        </p>
      )}
      {viewing !== null && <VersionText api={api} root={root} file={file} version={viewing} />}
    </div>
  );
}

function VersionText(props: { api: AgentApi; root: string; file: string; version: number }) {
  const { api, root, file, version } = props;
  const text = useQuery({
    queryKey: ['version', root, file, version],
    queryFn: () => api.versionContent({ root, file, version }),
  });
  if (text.error) return <ErrorLine error={text.error} />;
  if (!text.data) return <p className="muted">Reading version {version}…</p>;
  return (
    <figure className="diff">
      <figcaption>
        Version {version} of {file}
      </figcaption>
      {text.data.tooLarge ? (
        <p className="muted">{text.data.tooLarge}</p>
      ) : (
        // Focusable: a long version scrolls, and the keyboard must reach it (axe: scrollable-region-focusable).
        <pre tabIndex={0}>{text.data.content}</pre>
      )}
    </figure>
  );
}

/** The history of any file of the repository by its path: a file deleted from disk is not in the flows' lists. */
export function FindHistory(props: { api: AgentApi; root: string; version: string; onChange: () => void }) {
  const [typed, setTyped] = useState('');
  const [file, setFile] = useState<string | null>(null);
  const inputId = `history-of-${props.root}`.replace(/[^\w-]/g, '_');
  return (
    <details>
      <summary>History of a file (a deleted one too)</summary>
      <form
        className="row"
        onSubmit={(event) => {
          event.preventDefault();
          setFile(typed.trim() || null);
        }}
      >
        <label htmlFor={inputId}>File</label>
        <input
          id={inputId}
          value={typed}
          onChange={(event) => setTyped(event.target.value)}
          placeholder="flows/ci/build.yml"
        />
        <button type="submit">Show versions</button>
      </form>
      {file && (
        <FileHistory
          api={props.api}
          root={props.root}
          file={file}
          version={props.version}
          onChange={props.onChange}
        />
      )}
    </details>
  );
}

/** "changed by bob@laptop:~/app, 25 Nov 2026, 11:02" */
export function serviceSide(conflict: ConflictView): string {
  const what = conflict.serviceHash === null ? 'deleted' : 'changed';
  const by = conflict.writtenBy ? ` by ${conflict.writtenBy}` : '';
  const at = conflict.writtenAt ? `, ${new Date(conflict.writtenAt).toLocaleString()}` : '';
  return `${what}${by}${at}`;
}
