import type { Conflict, ParsedArgsOf, ValueOf } from '../../../protocol/index.ts';
import { CallRefused } from '../../errors.ts';
import { auditActorOf, BULK_DELETE_AUDIT } from '../audit.ts';
import type { CallContext, Implementations } from '../types.ts';
import type { FlowCalls } from './calls.ts';
import { checkDeletes, checkFiles, refuseUnsafePath } from './checks.ts';
import { conflictRefusal } from './conflicts.ts';

type WritePath =
  | 'svc/flow_def/action/sync_batch/run'
  | 'svc/flow_def/private/sync_internal'
  | 'svc/flow_def/public/update_file';

/** What a client writes into a repository's flows: a batch of flows, one flow by id, one file. */
export function flowWrites(calls: FlowCalls): Implementations<WritePath> {
  return {
    'svc/flow_def/action/sync_batch/run': (args, ctx) => syncBatch(calls, args, ctx),
    'svc/flow_def/private/sync_internal': (args, ctx) => syncInternal(calls, args, ctx),
    'svc/flow_def/public/update_file': (args, ctx) => updateFile(calls, args, ctx),
  };
}

function syncBatch(
  { writing, writerOf }: FlowCalls,
  args: ParsedArgsOf<'svc/flow_def/action/sync_batch/run'>,
  ctx: CallContext,
): Promise<ValueOf<'svc/flow_def/action/sync_batch/run'>> {
  const seen = new Set<string>();
  args.flows.forEach((flow, index) => {
    refuseUnsafePath(flow.flow_path, ['flows', index, 'flow_path']);
    if (seen.has(flow.flow_path)) {
      throw new CallRefused(`flows.${index}.flow_path "${flow.flow_path}" appears twice in the batch.`, {
        path: ['flows', index, 'flow_path'],
      });
    }
    seen.add(flow.flow_path);
    checkFiles(flow.files, ['flows', index, 'files']);
    checkDeletes(flow.deletes ?? [], ['flows', index, 'deletes']);
  });

  return writing(async (flows, audit) => {
    const repoId = await flows.ensureRepo(args.repo_owner, args.repo_name);
    await flows.lockFlows(
      repoId,
      args.flows.map((flow) => flow.flow_path),
    );
    const value = {
      files_created: 0,
      files_deleted: 0,
      files_updated: 0,
      flows_synced: 0,
      skipped: false,
      repo_id: repoId,
      files: [] as { flow_path: string; path: string; id: string; hash: string }[],
      conflicts: [] as Conflict[],
    };
    for (const flow of args.flows) {
      const result = await flows.syncFlow(repoId, flow.flow_path, flow.files, {
        deleteMissing: args.delete_missing ?? false,
        deletes: flow.deletes ?? [],
        keepFlowHash: false,
        writer: writerOf(ctx),
      });
      value.conflicts.push(...result.conflicts);
      value.files_created += result.created;
      value.files_updated += result.updated;
      value.files_deleted += result.deleted;
      value.flows_synced++;
      value.files.push(...result.written);
    }
    value.skipped = value.files_created + value.files_updated + value.files_deleted === 0;
    if (value.files_deleted >= BULK_DELETE_AUDIT)
      await audit.append(auditActorOf(ctx), {
        action: 'bulk_delete',
        target: `${args.repo_owner}/${args.repo_name}`,
        detail: { deleted: value.files_deleted, flows: args.flows.map((flow) => flow.flow_path) },
        traceId: ctx.traceId,
      });
    return value;
  });
}

function syncInternal(
  { writing, writerOf }: FlowCalls,
  args: ParsedArgsOf<'svc/flow_def/private/sync_internal'>,
  ctx: CallContext,
): Promise<ValueOf<'svc/flow_def/private/sync_internal'>> {
  refuseUnsafePath(args.flow_path, ['flow_path']);
  checkFiles(args.files, ['files']);
  return writing(async (flows, audit) => {
    if (!(await flows.repoExists(args.repo_id))) {
      throw new CallRefused(`No repository with id ${args.repo_id}: sync it once with sync_batch first.`, {
        path: ['repo_id'],
      });
    }
    await flows.lockFlows(args.repo_id, [args.flow_path]);
    const result = await flows.syncFlow(args.repo_id, args.flow_path, args.files, {
      deleteMissing: args.delete_missing ?? false,
      keepFlowHash: args.skip_hash_update ?? false,
      writer: writerOf(ctx),
    });
    if (result.deleted >= BULK_DELETE_AUDIT)
      await audit.append(auditActorOf(ctx), {
        action: 'bulk_delete',
        target: `repository ${args.repo_id}`,
        detail: { deleted: result.deleted, flows: [args.flow_path] },
        traceId: ctx.traceId,
      });
    return {
      files_created: result.created,
      files_deleted: result.deleted,
      files_updated: result.updated,
      flow_def_id: result.flowId,
      files: result.written,
      conflicts: result.conflicts,
    };
  });
}

async function updateFile(
  { writing, writerOf }: FlowCalls,
  args: ParsedArgsOf<'svc/flow_def/public/update_file'>,
  ctx: CallContext,
): Promise<ValueOf<'svc/flow_def/public/update_file'>> {
  const record = await writing((flows) =>
    flows.updateFileContent(args.fileId, args.content, args.base_hash, writerOf(ctx)),
  );
  if (!record) throw new CallRefused(`No file with id ${args.fileId}.`, { path: ['fileId'] });
  if ('conflict' in record) throw conflictRefusal(record.conflict as Conflict);
  return record;
}
