import { MAX_FILE_BYTES, type Conflict, type ParsedArgsOf, type ValueOf } from '../../../protocol/index.ts';
import { CallRefused } from '../../errors.ts';
import { sha256Hex } from '../../hash.ts';
import type { HistoryRetention } from '../../store/file-history.ts';
import type { CallContext, Implementations } from '../types.ts';
import type { FlowCalls } from './calls.ts';
import { refuseUnsafePath } from './checks.ts';

/** A write on a stale base, refused (422) with the conflict in `errorData`, so a client can show both sides. */
export function conflictRefusal(conflict: Conflict): CallRefused {
  const who = conflict.written_by ? ` by ${conflict.written_by}` : '';
  const when = conflict.written_at ? ` at ${conflict.written_at}` : '';
  return new CallRefused(
    `${conflict.flow_path}/${conflict.path} changed on the service${who}${when} since the version this write is based on: nothing was written.`,
    { reason: 'conflict', conflict },
  );
}

/** A member's own side of a conflict, kept on the service beside the file's history. */
export function keptCopies(
  calls: FlowCalls,
  retention: HistoryRetention,
): Implementations<'svc/flow_def/action/keep_copy/run'> {
  return {
    'svc/flow_def/action/keep_copy/run': (args, ctx) => keepCopy(calls, retention, args, ctx),
  };
}

function keepCopy(
  { writing, repoNamed, writerOf }: FlowCalls,
  retention: HistoryRetention,
  args: ParsedArgsOf<'svc/flow_def/action/keep_copy/run'>,
  ctx: CallContext,
): Promise<ValueOf<'svc/flow_def/action/keep_copy/run'>> {
  refuseUnsafePath(args.flow_path, ['flow_path']);
  refuseUnsafePath(args.path, ['path']);
  if (sha256Hex(args.content) !== args.hash)
    throw new CallRefused('hash is not the SHA-256 of content.', { path: ['hash'] });
  // Bounded like any file (the agent never sends more), and each member's copies of a repository to a quarter
  // of its history's cap: one member's copies can push out only their own older copies.
  const size = Buffer.byteLength(args.content);
  const copyBytes = Math.floor(retention.bytes / 4);
  if (size > MAX_FILE_BYTES || size > copyBytes)
    throw new CallRefused(
      `A conflict copy of ${size} bytes is over what the service keeps (${Math.min(MAX_FILE_BYTES, copyBytes)} bytes: a flow file's limit, and a quarter of a repository's history for one member's copies): nothing was kept.`,
      { path: ['content'] },
    );
  return writing(async (flows) => {
    const repoId = await repoNamed(flows, args.repo_owner, args.repo_name);
    const version = await flows.history.keepCopy(
      { repoId, flowPath: args.flow_path, path: args.path },
      { hash: args.hash, content: args.content, size },
      writerOf(ctx),
      copyBytes,
    );
    return { version };
  });
}
