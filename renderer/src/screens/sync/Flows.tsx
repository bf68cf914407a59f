import { keepPreviousData, useQuery } from '@tanstack/react-query';
import { useState } from 'react';
import type { AgentApi, FlowView } from '../../../../src/window/index.ts';
import { FileHistory } from '../FileHistory.tsx';
import { ErrorLine } from '../common.tsx';

const FLOW_STATES: Record<FlowView['state'], string> = {
  synced: 'synced',
  pending: 'pending',
  refused: 'refused',
  'not-sent': 'not sent',
  conflict: 'conflict',
  newer: 'newer on the service',
};

export function Flows(props: {
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
