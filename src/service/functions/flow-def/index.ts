// The service's flow-definition functions: what the flows hold (reads), what a client writes into them (writes), a
// file's past versions (history) and a member's side of a conflict (kept copies). Only this file is imported from
// outside the folder.
import type { ServiceStores } from '../stores.ts';
import type { Implementations } from '../types.ts';
import { flowCalls } from './calls.ts';
import { keptCopies } from './conflicts.ts';
import { flowHistory } from './history.ts';
import { flowReads } from './reads.ts';
import { flowWrites } from './writes.ts';

type FlowDefPath =
  | 'svc/flow_def/action/sync_batch/run'
  | 'svc/flow_def/private/sync_internal'
  | 'svc/flow_def/public/update_file'
  | 'svc/flow_def/public/capabilities'
  | 'svc/flow_def/public/list_flows'
  | 'svc/flow_def/public/list_files'
  | 'svc/flow_def/public/list_deleted'
  | 'svc/flow_def/public/file_versions'
  | 'svc/flow_def/public/version_content'
  | 'svc/flow_def/action/restore_version/run'
  | 'svc/flow_def/private/purge_history'
  | 'svc/flow_def/action/keep_copy/run';

export function flowDefFunctions(stores: ServiceStores): Implementations<FlowDefPath> {
  const calls = flowCalls(stores);
  return {
    ...flowWrites(calls),
    ...flowReads(calls, stores.retention),
    ...flowHistory(calls),
    ...keptCopies(calls, stores.retention),
  };
}
