import type { ParsedArgsOf, ValueOf } from '../../../protocol/index.ts';
import type { HistoryRetention } from '../../store/file-history.ts';
import type { Implementations } from '../types.ts';
import type { FlowCalls } from './calls.ts';
import { cursorFor, cursorOf } from './cursors.ts';

type ReadPath =
  | 'svc/flow_def/public/capabilities'
  | 'svc/flow_def/public/list_flows'
  | 'svc/flow_def/public/list_files'
  | 'svc/flow_def/public/list_deleted';

/** What the service holds now: its capabilities, a repository's flows, its files and its deleted files. */
export function flowReads(calls: FlowCalls, retention: HistoryRetention): Implementations<ReadPath> {
  return {
    'svc/flow_def/public/capabilities': () => capabilities(retention),
    'svc/flow_def/public/list_flows': (args) => listFlows(calls, args),
    'svc/flow_def/public/list_files': (args) => listFiles(calls, args),
    'svc/flow_def/public/list_deleted': (args) => listDeleted(calls, args),
  };
}

function capabilities(retention: HistoryRetention): ValueOf<'svc/flow_def/public/capabilities'> {
  return {
    bases: true,
    history: true,
    retention_days: retention.days,
    retention_bytes: retention.bytes,
    conflict_copies: true,
    repo_config_bases: true,
    live_changes: true,
    members: true,
  };
}

function listFlows(
  { reading }: FlowCalls,
  args: ParsedArgsOf<'svc/flow_def/public/list_flows'>,
): Promise<ValueOf<'svc/flow_def/public/list_flows'>> {
  return reading(async (flows) => {
    const repoId = await flows.repoByName(args.repo_owner, args.repo_name);
    return { flows: repoId === null ? [] : await flows.listFlows(repoId) };
  });
}

function listFiles(
  { reading }: FlowCalls,
  args: ParsedArgsOf<'svc/flow_def/public/list_files'>,
): Promise<ValueOf<'svc/flow_def/public/list_files'>> {
  return reading(async (flows) => {
    const repoId = await flows.repoByName(args.repo_owner, args.repo_name);
    if (repoId === null) return { files: [], next: null };
    const limit = args.first ?? 1000;
    const files = await flows.listFiles(repoId, {
      flowPath: args.flow_path ?? null,
      withContent: args.with_content ?? false,
      after: args.after === undefined ? null : cursorOf(args.after),
      limit,
    });
    const last = files.at(-1);
    return { files, next: files.length === limit && last ? cursorFor(last.flow_path, last.path) : null };
  });
}

function listDeleted(
  { reading }: FlowCalls,
  args: ParsedArgsOf<'svc/flow_def/public/list_deleted'>,
): Promise<ValueOf<'svc/flow_def/public/list_deleted'>> {
  return reading(async (flows) => {
    const repoId = await flows.repoByName(args.repo_owner, args.repo_name);
    if (repoId === null) return { files: [], next: null };
    const limit = args.first ?? 1000;
    const files = await flows.history.deleted(repoId, {
      after: args.after === undefined ? null : cursorOf(args.after),
      limit,
    });
    const last = files.at(-1);
    return { files, next: files.length === limit && last ? cursorFor(last.flow_path, last.path) : null };
  });
}
