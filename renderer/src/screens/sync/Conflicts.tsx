import { useState } from 'react';
import type { AgentApi, ConflictView, RepositoryView } from '../../../../src/window/index.ts';
import { hereSide, type HereSide } from '../../../../src/protocol/index.ts';
import { plural } from '../../plural.ts';
import { CompareConflict, serviceSide } from '../FileHistory.tsx';
import type { ConflictFile, WaitingChoices } from './waiting-choices.ts';

type Settle = (side: 'mine' | 'theirs', files?: ConflictFile[]) => void;

/**
 * Each file in conflict (who changed the service's version, when), with Compare, Keep mine and Take the service's;
 * then the same two for a flow's files and for all of them. Nothing when no file is in conflict.
 */
export function Conflicts(props: {
  api: AgentApi;
  repo: RepositoryView;
  list: readonly ConflictView[];
  choices: WaitingChoices;
  version: string;
}) {
  const { repo, list } = props;
  const { resolve, busy } = props.choices;
  const [comparing, setComparing] = useState<string | null>(null);
  if (list.length === 0) return null;
  /**
   * Settles conflicts once its user said so: taking the service's version, and any action on more than one file,
   * asks first (one click never replaces an edit with no word). What was on disk is kept before it is replaced.
   */
  const settle: Settle = (side, files) => {
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
  const disabled = busy || repo.paused;
  return (
    <>
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
            return (
              <ConflictRow
                key={file}
                api={props.api}
                root={repo.root}
                conflict={conflict}
                version={props.version}
                disabled={disabled}
                comparing={comparing === file}
                onCompare={() => setComparing(comparing === file ? null : file)}
                settle={settle}
              />
            );
          })}
        </tbody>
      </table>
      <SettleAtOnce list={list} disabled={disabled} settle={settle} />
    </>
  );
}

/** One file in conflict, and, while its user compares, a row below with both versions. */
function ConflictRow(props: {
  api: AgentApi;
  root: string;
  conflict: ConflictView;
  version: string;
  disabled: boolean;
  comparing: boolean;
  onCompare: () => void;
  settle: Settle;
}) {
  const { conflict, comparing, disabled, settle } = props;
  const file = `${conflict.flowPath}/${conflict.path}`;
  const diffId = `compare-${props.root}-${file}`.replace(/[^\w-]/g, '_');
  return (
    <>
      <tr>
        <th scope="row">
          <code>
            {conflict.flowPath}/{conflict.path}
          </code>
        </th>
        <td>{serviceSide(conflict)}</td>
        <td>
          {/* No base: never synced from this checkout (a worktree made the source): not an edit here. */}
          {/* Of the disk now, never of what was sent: an edit made while behind is "changed". */}
          {conflict.lost
            ? 'the only copy may be here: the service lost the version synced here'
            : HERE[hereSide({ disk: conflict.diskHash, base: conflict.baseHash })]}
        </td>
        <td className="row">
          {/* Named with their file: a row's buttons read alone ("Keep mine") say nothing of which. */}
          <button
            aria-expanded={comparing}
            aria-controls={comparing ? diffId : undefined}
            aria-label={`Compare ${file}`}
            onClick={props.onCompare}
          >
            Compare
          </button>
          <button
            disabled={disabled}
            aria-label={`Keep mine for ${file}`}
            onClick={() => settle('mine', [fileOf(conflict)])}
          >
            Keep mine
          </button>
          {/* Never offered for a version the service lost: it would age or delete the only copy. */}
          {!conflict.lost && (
            <button
              disabled={disabled}
              aria-label={`Take the service's for ${file}`}
              onClick={() => settle('theirs', [fileOf(conflict)])}
            >
              Take the service's
            </button>
          )}
        </td>
      </tr>
      {comparing && (
        <tr id={diffId}>
          <td colSpan={4}>
            <CompareConflict api={props.api} root={props.root} conflict={conflict} version={props.version} />
          </td>
        </tr>
      )}
    </>
  );
}

/** Keep mine and Take the service's for each flow's files and for all of them, when there are several. */
function SettleAtOnce(props: { list: readonly ConflictView[]; disabled: boolean; settle: Settle }) {
  const { list, disabled, settle } = props;
  // A flow's conflicts settled at once (when there are several flows: one flow's are "all").
  const byFlow = [...groupByFlow(list).entries()];
  return (
    <>
      {byFlow.length > 1 &&
        byFlow
          .filter(([, files]) => files.length > 1)
          .map(([flowPath, files]) => (
            <div className="row" key={flowPath}>
              <button disabled={disabled} onClick={() => settle('mine', files)}>
                Keep mine for the {files.length} in {flowPath}
              </button>
              <button disabled={disabled} onClick={() => settle('theirs', files)}>
                Take the service's for the {files.length} in {flowPath}
              </button>
            </div>
          ))}
      {list.length > 1 && (
        <div className="row">
          <button disabled={disabled} onClick={() => settle('mine')}>
            Keep mine for all {list.length}
          </button>
          <button disabled={disabled} onClick={() => settle('theirs')}>
            Take the service's for all {list.length}
          </button>
        </div>
      )}
    </>
  );
}

/** The "Here" column of a file in conflict, from the disk as it is now (hereSide). */
const HERE: Record<HereSide, string> = {
  deleted: 'deleted',
  'never synced': 'another version (never synced from here)',
  unchanged: 'unchanged (behind)',
  changed: 'changed',
};

function groupByFlow(conflicts: readonly ConflictView[]): Map<string, ConflictFile[]> {
  const flows = new Map<string, ConflictFile[]>();
  for (const conflict of conflicts)
    flows.set(conflict.flowPath, [...(flows.get(conflict.flowPath) ?? []), fileOf(conflict)]);
  return flows;
}

function fileOf(conflict: ConflictView): ConflictFile {
  return { flowPath: conflict.flowPath, path: conflict.path };
}
