import { InvalidArgsError, RemoteError, type RemoteClient } from '../client/index.ts';
import { SYNC_CALL_LIMITS, type FileEntry, type FlowEntry } from '../protocol/index.ts';
import type { Hasher, HashResult } from './hasher.ts';
import type { FlowPlan } from './planner.ts';
import type { FileRecord, SyncState } from './state.ts';

// Under the service's caps per call (test/sync/chunking.test.ts checks every chunk against them).
export const MAX_FLOWS_PER_BATCH = Math.min(200, SYNC_CALL_LIMITS.flows);
export const MAX_BATCH_BYTES = Math.min(4 * 1024 * 1024, SYNC_CALL_LIMITS.contentBytes);
export const MAX_IN_FLIGHT = 2;

export interface UploadTarget {
  root: string;
  owner: string;
  name: string;
}

/** What an upload needs: the service, the reader, and the outbox it records answers in as they arrive. */
export interface UploadContext {
  client: RemoteClient;
  hasher: Hasher;
  target: UploadTarget;
  state: SyncState;
  repoId: number;
}

/** The counts of one round of uploads; what the service confirmed is already in the state. */
export interface UploadTally {
  rejected: { flowPath: string; message: string }[];
  flows: number;
  created: number;
  updated: number;
  deleted: number;
  requests: number;
}

export interface Batch {
  plans: FlowPlan[];
  /** true: every present file is listed and the service drops the rest; false: only changed files are sent. */
  full: boolean;
}

export interface BatchLimits {
  flows: number;
  bytes: number;
}

const LIMITS: BatchLimits = { flows: MAX_FLOWS_PER_BATCH, bytes: MAX_BATCH_BYTES };

/** Bytes a file adds to a request, estimated from its size (JSON escaping rarely adds more than a tenth). */
function estimatedBytes(file: FileRecord): number {
  return Math.ceil((file.size ?? 0) * 1.1) + file.path.length + 160;
}

/** Groups plans into sync_batch requests of at most 200 flows or 4 MiB; a flow larger than that goes alone. */
export function chunkPlans(plans: readonly FlowPlan[], full: boolean, limits = LIMITS): Batch[] {
  const batches: Batch[] = [];
  let current: FlowPlan[] = [];
  let bytes = 0;
  for (const plan of plans) {
    const files = full ? plan.present : plan.upserts;
    const planBytes = files.reduce((sum, file) => sum + estimatedBytes(file), plan.flowPath.length + 64);
    if (current.length > 0 && (current.length >= limits.flows || bytes + planBytes > limits.bytes)) {
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

/** A single changed file whose id the service gave us goes by update_file, the cheapest call. */
export function isSingleUpdate(plan: FlowPlan): boolean {
  const file = plan.upserts[0];
  return !plan.full && plan.upserts.length === 1 && Boolean(file?.fileId && file.ackedHash);
}

/**
 * Sends plans to the service: update_file for a single changed file whose id is known, sync_batch otherwise
 * (full listings with delete_missing for flows that lost files or whose last request went unanswered, changed
 * files only for the rest), at most two requests in flight. Each answer is recorded as it arrives. Connection
 * and server failures are thrown: the engine retries later.
 */
export async function uploadPlans(
  context: UploadContext,
  plans: readonly FlowPlan[],
  onProgress: (flowsDone: number) => void = () => {},
): Promise<UploadTally> {
  const tally: UploadTally = { rejected: [], flows: 0, created: 0, updated: 0, deleted: 0, requests: 0 };
  let flowsDone = 0;
  const done = (count: number) => onProgress((flowsDone += count));
  const singles = plans.filter(isSingleUpdate);
  const tasks = [
    ...singles.map((plan) => () => updateOneFile(context, plan, tally).then(() => done(1))),
    ...batchesOf(plans.filter((plan) => !singles.includes(plan))).map(
      (batch) => () =>
        sendWithBisection(
          batch.plans,
          (plans) => sendBatch(context, { plans, full: batch.full }, tally).then(() => done(plans.length)),
          (plan, message) => {
            refuse(context, plan, message, tally);
            done(1);
          },
        ),
    ),
  ];
  await runInLanes(tasks, MAX_IN_FLIGHT);
  return tally;
}

/** Full listings first (flows that lost files, or whose answer was lost), then flows with changes only. */
function batchesOf(plans: readonly FlowPlan[]): Batch[] {
  return [
    ...chunkPlans(
      plans.filter((plan) => plan.full),
      true,
    ),
    ...chunkPlans(
      plans.filter((plan) => !plan.full),
      false,
    ),
  ];
}

/**
 * Runs tasks in order with at most `lanes` at once. After a failure no new task starts; those running finish
 * (their answers are recorded) and the first failure is thrown.
 */
export async function runInLanes(tasks: readonly (() => Promise<void>)[], lanes: number): Promise<void> {
  let next = 0;
  let failure: { error: unknown } | null = null;
  const lane = async () => {
    while (failure === null && next < tasks.length) {
      const task = tasks[next++]!;
      try {
        await task();
      } catch (error) {
        failure ??= { error };
      }
    }
  };
  await Promise.all(Array.from({ length: lanes }, lane));
  if (failure) throw (failure as { error: unknown }).error;
}

/**
 * Sends plans with `send`; when the service refuses the request for its content, narrows it down to the flow at
 * fault (named by the refusal, else by halving) and hands that flow to `refuse` while the others go through.
 * Anything that is not a refusal (no answer, 5xx) is thrown.
 */
export async function sendWithBisection<T>(
  plans: readonly T[],
  send: (plans: T[]) => Promise<void>,
  refuse: (plan: T, message: string) => void,
): Promise<void> {
  try {
    await send([...plans]);
  } catch (error) {
    const refusal = refusalOf(error);
    if (refusal === null) throw error;
    const culprit = refusal.flowIndex === null ? undefined : plans[refusal.flowIndex];
    if (culprit !== undefined) {
      refuse(culprit, refusal.message);
      const others = plans.filter((plan) => plan !== culprit);
      if (others.length > 0) await sendWithBisection(others, send, refuse);
    } else if (plans.length === 1) {
      refuse(plans[0]!, refusal.message);
    } else {
      // The refusal does not say which flow: halve the batch until it does.
      const half = Math.ceil(plans.length / 2);
      await sendWithBisection(plans.slice(0, half), send, refuse);
      await sendWithBisection(plans.slice(half), send, refuse);
    }
  }
}

/** One sync_batch request: read the files, note the flows as sent, send, record the answer. */
async function sendBatch(context: UploadContext, batch: Batch, tally: UploadTally): Promise<void> {
  const { client, target, state, repoId } = context;
  const sent = await readEntries(context, batch);
  if (sent.length === 0) return;
  const flowPaths = sent.map(({ plan }) => plan.flowPath);
  state.markSending(repoId, flowPaths);
  tally.requests++;
  try {
    const value = await client.flowDef.syncBatch({
      repo_owner: target.owner,
      repo_name: target.name,
      flows: sent.map((entry) => entry.entry),
      delete_missing: batch.full,
    });
    const ids = new Map((value.files ?? []).map((file) => [`${file.flow_path}\0${file.path}`, file.id]));
    state.acknowledge(
      repoId,
      sent.map(({ plan, entry }) => {
        const sentPaths = new Set(entry.files.map((file) => file.path));
        return {
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
        };
      }),
    );
    for (const flowPath of flowPaths) state.clearRejection(repoId, flowPath);
    tally.flows += value.flows_synced;
    tally.created += value.files_created;
    tally.updated += value.files_updated;
    tally.deleted += value.files_deleted;
  } catch (error) {
    const plans = sent.map(({ plan }) => plan);
    settleIfRefused(context, plans, error);
    // A refusal names the flow by its place in what was sent; the caller's places are those of the batch.
    if (plans.length < batch.plans.length && refusalOf(error) !== null)
      throw new RefusalOfSome(
        error,
        plans.map((plan) => batch.plans.indexOf(plan)),
      );
    throw error;
  }
}

/** A refusal of a batch sent without some of its flows (held back: a file unreadable just then). */
class RefusalOfSome extends Error {
  constructor(
    readonly refusal: unknown,
    /** The batch's index of each flow that was sent, in the order sent. */
    readonly indexes: number[],
  ) {
    super(refusal instanceof Error ? refusal.message : String(refusal));
  }
}

/** update_file for one file whose id is known; an id the service no longer knows falls back to sync_batch. */
async function updateOneFile(context: UploadContext, plan: FlowPlan, tally: UploadTally): Promise<void> {
  const { client, hasher, target, state, repoId } = context;
  const file = plan.upserts[0]!;
  const [read] = await hasher.hash(target.root, [`${plan.flowPath}/${file.path}`], true);
  if (!read) return;
  state.recordReads(repoId, [readRecord(plan, file, read)]);
  if (read.missing || read.content === null) return; // changed meanwhile: the next plan says what to do
  state.markSending(repoId, [plan.flowPath]);
  tally.requests++;
  try {
    const record = await client.flowDef.updateFile({ fileId: file.fileId!, content: read.content });
    state.acknowledge(repoId, [
      {
        flowPath: plan.flowPath,
        stored: [{ path: file.path, hash: record.hash, fileId: record.id }],
        dropped: [],
      },
    ]);
    state.clearRejection(repoId, plan.flowPath);
    tally.flows++;
    tally.updated++;
  } catch (error) {
    settleIfRefused(context, [plan], error);
    // The service lost the file (a reset database, a flow deleted elsewhere): forget the id, use sync_batch.
    if (!(error instanceof RemoteError && error.statusCode === 422)) throw error;
    state.acknowledge(repoId, [{ flowPath: plan.flowPath, stored: [], dropped: [file.path] }]);
  }
}

/** A refusal means the service stored nothing of the request: its flows are known again (unless they were not before). */
function settleIfRefused(context: UploadContext, plans: readonly FlowPlan[], error: unknown): void {
  if (refusalOf(error) === null) return;
  context.state.settle(
    context.repoId,
    plans.filter((plan) => !plan.uncertain).map((plan) => plan.flowPath),
  );
}

function refuse(context: UploadContext, plan: FlowPlan, message: string, tally: UploadTally): void {
  context.state.reject(context.repoId, plan.flowPath, message, plan.signature);
  tally.rejected.push({ flowPath: plan.flowPath, message });
}

/**
 * Reads the files of a batch (in the worker pool): what changed since hashing is sent as it is now, and what was
 * read becomes the local state.
 */
async function readEntries(
  context: UploadContext,
  batch: Batch,
): Promise<{ plan: FlowPlan; entry: FlowEntry }[]> {
  const { hasher, target, state, repoId } = context;
  const wanted = batch.plans.flatMap((plan) =>
    (batch.full ? plan.present : plan.upserts).map((file) => ({ plan, file })),
  );
  const reads = await hasher.hash(
    target.root,
    wanted.map(({ plan, file }) => `${plan.flowPath}/${file.path}`),
    true,
  );
  const entries = new Map<FlowPlan, FileEntry[]>(batch.plans.map((plan) => [plan, []]));
  const records: Parameters<SyncState['recordReads']>[1] = [];
  wanted.forEach(({ plan, file }, index) => {
    const read = reads[index];
    if (!read) return;
    records.push(readRecord(plan, file, read));
    if (read.missing || read.content === null) return;
    entries.get(plan)!.push({ path: file.path, content: read.content, hash: read.hash });
  });
  state.recordReads(repoId, records);
  // A full listing drops on the service whatever it does not list: a flow with a file that could not be read
  // just now (EMFILE, EACCES…) is not sent this round, and its next plan keeps that file as the service has it.
  const held = new Set(wanted.filter((_, index) => isUnreadable(reads[index])).map(({ plan }) => plan));
  return batch.plans
    .filter((plan) => !(batch.full && held.has(plan)))
    .map((plan) => ({ plan, entry: { flow_path: plan.flowPath, files: entries.get(plan)! } }));
}

function readRecord(plan: FlowPlan, file: FileRecord, read: HashResult) {
  return {
    flowPath: plan.flowPath,
    path: file.path,
    expected: file.localHash,
    read: read.missing ? null : { hash: read.hash, size: read.size, warning: read.warning },
  };
}

/**
 * A refusal that is about the content (HTTP 400, 404, 413, 422, or args our own schema refused), with the index of
 * the flow at fault when the error names it; null for anything worth retrying as it is (401, 408, 429, 5xx,
 * no answer).
 */
export function refusalOf(error: unknown): { message: string; flowIndex: number | null } | null {
  if (error instanceof RefusalOfSome) {
    const inner = refusalOf(error.refusal);
    if (inner === null) return null;
    return {
      ...inner,
      flowIndex: inner.flowIndex === null ? null : (error.indexes[inner.flowIndex] ?? null),
    };
  }
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

function isUnreadable(read: HashResult | undefined): boolean {
  return read !== undefined && !read.missing && read.warning === 'unreadable';
}
