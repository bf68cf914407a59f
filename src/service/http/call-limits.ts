import { SYNC_CALL_LIMITS, type FunctionPath, type SyncCallLimit } from '../../protocol/index.ts';

export interface ExceededLimit {
  limit: SyncCallLimit;
  max: number;
  got: number;
}

type Flows = (args: Record<string, unknown>) => unknown[];

/** The flows a call carries: sync_batch lists them, sync_internal is one flow's files. */
const FLOWS_OF: Partial<Record<FunctionPath, Flows>> = {
  'svc/flow_def/action/sync_batch/run': (args) => (Array.isArray(args.flows) ? args.flows : []),
  'svc/flow_def/private/sync_internal': (args) => [args],
};

const WHAT: Record<SyncCallLimit, string> = {
  flows: 'flows',
  files: 'files',
  contentBytes: 'bytes of content',
};

/**
 * The first of SYNC_CALL_LIMITS a call goes over, or null. Counted on the args as sent, before the schema reads
 * them: a call of 60,000 flows is refused before anything walks or stores them.
 */
export function exceededLimit(path: FunctionPath, args: Record<string, unknown>): ExceededLimit | null {
  const flowsOf = FLOWS_OF[path];
  if (!flowsOf) return null;
  const flows = flowsOf(args);
  if (flows.length > SYNC_CALL_LIMITS.flows) return over('flows', flows.length);
  let files = 0;
  let contentBytes = 0;
  for (const flow of flows) {
    const list = (flow as { files?: unknown } | null)?.files;
    if (!Array.isArray(list)) continue;
    files += list.length;
    for (const file of list) {
      const content = (file as { content?: unknown } | null)?.content;
      if (typeof content === 'string') contentBytes += Buffer.byteLength(content, 'utf8');
    }
  }
  if (files > SYNC_CALL_LIMITS.files) return over('files', files);
  if (contentBytes > SYNC_CALL_LIMITS.contentBytes) return over('contentBytes', contentBytes);
  return null;
}

function over(limit: SyncCallLimit, got: number): ExceededLimit {
  return { limit, max: SYNC_CALL_LIMITS[limit], got };
}

/** `at most 1,000 flows per call (this one has 60,000)`. */
export function describeLimit({ limit, max, got }: ExceededLimit): string {
  const count = (n: number) => n.toLocaleString('en-US');
  return `at most ${count(max)} ${WHAT[limit]} per call (this one has ${count(got)})`;
}
