import { InvalidArgsError, RemoteError, type RemoteClient } from '../client/index.ts';
import { SYNC_CALL_LIMITS, type FileEntry, type FlowEntry } from '../protocol/index.ts';
import type { Hasher } from './hasher.ts';
import type { FlowPlan } from './planner.ts';
import type { FileRecord, FlowAck } from './state.ts';

// Under the service's caps per call (test/sync/chunking.test.ts checks every chunk against them).
export const MAX_FLOWS_PER_BATCH = Math.min(200, SYNC_CALL_LIMITS.flows);
export const MAX_BATCH_BYTES = Math.min(4 * 1024 * 1024, SYNC_CALL_LIMITS.contentBytes);
export const MAX_IN_FLIGHT = 2;

export interface UploadTarget {
  root: string;
  owner: string;
  name: string;
}

/** The outcome of one round of uploads: what the service confirmed, what it refused, and the counts. */
export interface UploadResult {
  acks: FlowAck[];
  rejected: { plan: FlowPlan; message: string }[];
  /** File ids the service no longer knows: the next round uses sync_batch for those files. */
  staleFileIds: { flowPath: string; path: string }[];
  flows: number;
  created: number;
  updated: number;
  deleted: number;
  requests: number;
}

interface Batch {
  plans: FlowPlan[];
  /** true: every present file is listed and the service drops the rest; false: only changed files are sent. */
  full: boolean;
}

/** Bytes a file adds to a request, estimated from its size (JSON escaping rarely adds more than a tenth). */
function estimatedBytes(file: FileRecord): number {
  return Math.ceil((file.size ?? 0) * 1.1) + file.path.length + 160;
}

/** Groups plans into sync_batch requests of at most 200 flows or 4 MiB; a flow larger than that goes alone. */
export function chunkPlans(plans: readonly FlowPlan[], full: boolean): Batch[] {
  const batches: Batch[] = [];
  let current: FlowPlan[] = [];
  let bytes = 0;
  for (const plan of plans) {
    const files = full ? plan.present : plan.upserts;
    const planBytes = files.reduce((sum, file) => sum + estimatedBytes(file), plan.flowPath.length + 64);
    if (
      current.length > 0 &&
      (current.length >= MAX_FLOWS_PER_BATCH || bytes + planBytes > MAX_BATCH_BYTES)
    ) {
      batches.push({ plans: current, full });
      current = [];
      bytes = 0;
    }
    current.push(plan);
    bytes += planBytes;
  }
  if (current.length > 0) batches.push({ plans: current, full });
  return batches;
}

/**
 * Sends plans to the service: update_file for a single changed file whose id is known, sync_batch otherwise
 * (full listings with delete_missing for flows that lost files, changed files only for the rest), at most two
 * requests in flight. A batch the service refuses is narrowed down to the flow at fault, which is reported as
 * rejected while the others go through. Connection and server failures are thrown: the engine retries later.
 */
export async function uploadPlans(
  client: RemoteClient,
  hasher: Hasher,
  target: UploadTarget,
  plans: readonly FlowPlan[],
  onProgress: (flowsDone: number) => void = () => {},
): Promise<UploadResult> {
  const result: UploadResult = {
    acks: [],
    rejected: [],
    staleFileIds: [],
    flows: 0,
    created: 0,
    updated: 0,
    deleted: 0,
    requests: 0,
  };
  const singleUpdates = plans.filter(
    (p) =>
      p.deletes.length === 0 && p.upserts.length === 1 && p.upserts[0]!.fileId && p.upserts[0]!.ackedHash,
  );
  const rest = plans.filter((plan) => !singleUpdates.includes(plan));
  const queue: (() => Promise<void>)[] = [
    ...singleUpdates.map((plan) => () => updateOneFile(plan)),
    ...chunkPlans(
      rest.filter((plan) => plan.deletes.length > 0),
      true,
    ).map((batch) => () => sendBatch(batch)),
    ...chunkPlans(
      rest.filter((plan) => plan.deletes.length === 0),
      false,
    ).map((batch) => () => sendBatch(batch)),
  ];

  let flowsDone = 0;
  const done = (count: number) => {
    flowsDone += count;
    onProgress(flowsDone);
  };

  async function updateOneFile(plan: FlowPlan): Promise<void> {
    const file = plan.upserts[0]!;
    const [read] = await hasher.hash(target.root, [`${plan.flowPath}/${file.path}`], true);
    if (!read || read.missing || read.content === null) return done(1); // changed again meanwhile: next round
    result.requests++;
    try {
      const record = await client.flowDef.updateFile({ fileId: file.fileId!, content: read.content });
      result.acks.push({
        flowPath: plan.flowPath,
        stored: [{ path: file.path, hash: record.hash, fileId: record.id }],
        dropped: [],
      });
      result.flows++;
      result.updated++;
    } catch (error) {
      // The service lost the file (a reset database, a flow deleted elsewhere): forget the id, use sync_batch.
      if (error instanceof RemoteError && error.statusCode === 422) {
        result.staleFileIds.push({ flowPath: plan.flowPath, path: file.path });
      } else {
        throw error;
      }
    }
    done(1);
  }

  async function sendBatch(batch: Batch): Promise<void> {
    const sent = await readEntries(batch);
    result.requests++;
    try {
      const value = await client.flowDef.syncBatch({
        repo_owner: target.owner,
        repo_name: target.name,
        flows: sent.map((entry) => entry.entry),
        delete_missing: batch.full,
      });
      const ids = new Map((value.files ?? []).map((file) => [`${file.flow_path}\0${file.path}`, file.id]));
      for (const { plan, entry } of sent) {
        const sentPaths = new Set(entry.files.map((file) => file.path));
        result.acks.push({
          flowPath: plan.flowPath,
          stored: entry.files.map((file) => ({
            path: file.path,
            hash: file.hash,
            fileId: ids.get(`${plan.flowPath}\0${file.path}`) ?? null,
          })),
          // With a full listing the service dropped whatever was not listed; without one it dropped nothing.
          dropped: batch.full
            ? [...plan.deletes, ...plan.present].filter((f) => !sentPaths.has(f.path)).map((f) => f.path)
            : [],
        });
      }
      result.flows += value.flows_synced;
      result.created += value.files_created;
      result.updated += value.files_updated;
      result.deleted += value.files_deleted;
      done(batch.plans.length);
    } catch (error) {
      const refusal = refusalOf(error);
      if (refusal === null) throw error;
      const culprit = refusal.flowIndex === null ? null : batch.plans[refusal.flowIndex];
      if (culprit) {
        result.rejected.push({ plan: culprit, message: refusal.message });
        done(1);
        const others = batch.plans.filter((plan) => plan !== culprit);
        if (others.length > 0) await sendBatch({ plans: others, full: batch.full });
      } else if (batch.plans.length === 1) {
        result.rejected.push({ plan: batch.plans[0]!, message: refusal.message });
        done(1);
      } else {
        // The refusal does not say which flow: halve the batch until it does.
        const half = Math.ceil(batch.plans.length / 2);
        await sendBatch({ plans: batch.plans.slice(0, half), full: batch.full });
        await sendBatch({ plans: batch.plans.slice(half), full: batch.full });
      }
    }
  }

  /** Reads the files of a batch (in the worker pool): what changed since hashing is sent as it is now. */
  async function readEntries(batch: Batch): Promise<{ plan: FlowPlan; entry: FlowEntry }[]> {
    const wanted = batch.plans.flatMap((plan) =>
      (batch.full ? plan.present : plan.upserts).map((file) => ({ plan, file })),
    );
    const reads = await hasher.hash(
      target.root,
      wanted.map(({ plan, file }) => `${plan.flowPath}/${file.path}`),
      true,
    );
    const entries = new Map<FlowPlan, FileEntry[]>(batch.plans.map((plan) => [plan, []]));
    wanted.forEach(({ plan, file }, index) => {
      const read = reads[index];
      if (!read || read.missing || read.content === null) return;
      entries.get(plan)!.push({ path: file.path, content: read.content, hash: read.hash });
    });
    return batch.plans.map((plan) => ({
      plan,
      entry: { flow_path: plan.flowPath, files: entries.get(plan)! },
    }));
  }

  // At most MAX_IN_FLIGHT requests at once, in order.
  let next = 0;
  const lanes = Array.from({ length: MAX_IN_FLIGHT }, async () => {
    while (next < queue.length) await queue[next++]!();
  });
  await Promise.all(lanes);
  return result;
}

/**
 * A refusal that is about the content (HTTP 400, 404, 413, 422, or args our own schema refused), with the index of
 * the flow at fault when the error names it; null for anything worth retrying as it is (401, 408, 429, 5xx,
 * no answer).
 */
function refusalOf(error: unknown): { message: string; flowIndex: number | null } | null {
  if (error instanceof InvalidArgsError) {
    return { message: error.message, flowIndex: flowIndexOf(error.issues[0]?.path) };
  }
  if (!(error instanceof RemoteError)) return null;
  if ([401, 403, 408, 429].includes(error.statusCode) || error.statusCode >= 500) return null;
  const issues = error.errorData.issues as { path?: unknown }[] | undefined;
  const path = (error.errorData.path as unknown[] | undefined) ?? issues?.[0]?.path;
  const message =
    error.statusCode === 413
      ? 'the flow is larger than the service accepts in one request'
      : `${error.errorMessage} (HTTP ${error.statusCode})`;
  return { message, flowIndex: flowIndexOf(path) };
}

function flowIndexOf(path: unknown): number | null {
  if (!Array.isArray(path) || path[0] !== 'flows' || typeof path[1] !== 'number') return null;
  return path[1];
}
