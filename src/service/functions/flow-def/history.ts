import { FILE_VERSIONS_PAGE_MAX, type ParsedArgsOf, type ValueOf } from '../../../protocol/index.ts';
import { CallRefused } from '../../errors.ts';
import { auditActorOf } from '../audit.ts';
import type { CallContext, Implementations } from '../types.ts';
import type { FlowCalls } from './calls.ts';
import { conflictRefusal } from './conflicts.ts';
import { versionCursorOf } from './cursors.ts';

type HistoryPath =
  | 'svc/flow_def/public/file_versions'
  | 'svc/flow_def/public/version_content'
  | 'svc/flow_def/action/restore_version/run'
  | 'svc/flow_def/private/purge_history';

/** A file's past versions: listed, read, written back as the file, or purged. */
export function flowHistory(calls: FlowCalls): Implementations<HistoryPath> {
  return {
    'svc/flow_def/public/file_versions': (args) => fileVersions(calls, args),
    'svc/flow_def/private/purge_history': (args, ctx) => purgeHistory(calls, args, ctx),
    'svc/flow_def/public/version_content': (args) => versionContent(calls, args),
    'svc/flow_def/action/restore_version/run': (args, ctx) => restoreVersion(calls, args, ctx),
  };
}

function fileVersions(
  { reading, repoNamed }: FlowCalls,
  args: ParsedArgsOf<'svc/flow_def/public/file_versions'>,
): Promise<ValueOf<'svc/flow_def/public/file_versions'>> {
  return reading(async (flows) => {
    const repoId = await repoNamed(flows, args.repo_owner, args.repo_name);
    // Paged: a file written every minute has tens of thousands of versions in its 30 days.
    const limit = args.first ?? FILE_VERSIONS_PAGE_MAX;
    const versions = await flows.history.versions(repoId, args.flow_path, args.path, {
      before: args.after === undefined ? null : versionCursorOf(args.after),
      limit,
    });
    const last = versions.at(-1);
    return {
      flow_path: args.flow_path,
      path: args.path,
      versions,
      purges: await flows.history.purges(repoId, args.flow_path, args.path),
      next: versions.length === limit && last ? String(last.version) : null,
      capped: await flows.history.lastCapped(repoId),
    };
  });
}

function purgeHistory(
  { writing, repoNamed }: FlowCalls,
  args: ParsedArgsOf<'svc/flow_def/private/purge_history'>,
  ctx: CallContext,
): Promise<ValueOf<'svc/flow_def/private/purge_history'>> {
  return writing(async (flows, audit) => {
    const repoId = await repoNamed(flows, args.repo_owner, args.repo_name);
    const file = { repoId, flowPath: args.flow_path, path: args.path };
    // The flow is ours while its versions go: a write to it meanwhile would replace a version being purged.
    await flows.lockFlows(repoId, [args.flow_path]);
    if (args.version !== undefined) {
      const found = await flows.history.version(args.version);
      if (!found || found.repo_id !== repoId || found.flow_path !== file.flowPath || found.path !== file.path)
        throw new CallRefused(
          `No version ${args.version} of ${file.flowPath}/${file.path} (past the retention, purged, or another file's).`,
          { path: ['version'] },
        );
      const current = await flows.history.current(repoId, file.flowPath, file.path);
      if (current?.version === args.version)
        throw new CallRefused(
          `Version ${args.version} is what ${file.flowPath}/${file.path} holds now: delete the file (or write over it) first, then purge.`,
          { path: ['version'] },
        );
    }
    const purge = await flows.history.purge(
      file,
      args.version ?? null,
      ctx.writer,
      ctx.member?.memberId ?? null,
    );
    await audit.append(auditActorOf(ctx), {
      action: 'purge_history',
      target: `${args.repo_owner}/${args.repo_name} ${file.flowPath}/${file.path}`,
      detail: { version: args.version ?? 'all but the current', versions: purge.versions },
      traceId: ctx.traceId,
    });
    return { flow_path: file.flowPath, path: file.path, purge };
  });
}

function versionContent(
  { writing }: FlowCalls,
  args: ParsedArgsOf<'svc/flow_def/public/version_content'>,
): Promise<ValueOf<'svc/flow_def/public/version_content'>> {
  // A transaction: a current version's content is read from its file, which a write may change in between.
  return writing(async (flows) => {
    const found = await flows.history.version(args.version);
    if (!found) throw noVersion(args.version);
    return {
      version: found.version,
      flow_path: found.flow_path,
      path: found.path,
      hash: found.hash,
      content: found.content,
    };
  });
}

function restoreVersion(
  { writing, writerOf }: FlowCalls,
  args: ParsedArgsOf<'svc/flow_def/action/restore_version/run'>,
  ctx: CallContext,
): Promise<ValueOf<'svc/flow_def/action/restore_version/run'>> {
  return writing(async (flows, audit) => {
    const asked = await flows.history.version(args.version);
    if (!asked) throw noVersion(args.version);
    // Read again once the flow is ours: a current version's content is its file's, which may have changed.
    await flows.lockFlows(asked.repo_id, [asked.flow_path]);
    const found = await flows.history.version(args.version);
    if (!found) throw noVersion(args.version);
    const { repo_id: repoId, flow_path: flowPath, path } = found;
    const base = args.base_hash === undefined ? undefined : args.base_hash;
    const result =
      found.hash === null || found.content === null
        ? await flows.syncFlow(repoId, flowPath, [], {
            deleteMissing: false,
            deletes: [
              {
                path,
                base_hash: base ?? (await flows.history.current(repoId, flowPath, path))?.hash ?? '',
              },
            ],
            keepFlowHash: false,
            writer: writerOf(ctx),
          })
        : await flows.syncFlow(
            repoId,
            flowPath,
            [
              {
                path,
                content: found.content,
                hash: found.hash,
                ...(base !== undefined && { base_hash: base }),
              },
            ],
            { deleteMissing: false, keepFlowHash: false, writer: writerOf(ctx) },
          );
    if (result.conflicts.length > 0) throw conflictRefusal(result.conflicts[0]!);
    const now = await flows.history.current(repoId, flowPath, path);
    await audit.append(auditActorOf(ctx), {
      action: 'restore_version',
      target: `${flowPath}/${path}`,
      detail: { repo_id: repoId, from: args.version, to: now!.version },
      traceId: ctx.traceId,
    });
    return { flow_path: flowPath, path, version: now!.version, hash: now!.hash };
  });
}

function noVersion(version: number): CallRefused {
  return new CallRefused(`No version ${version} (past the retention, or never).`, { path: ['version'] });
}
