import {
  checkAccess,
  conflictOf,
  failureKind,
  reasonOf,
  statusNote,
  InvalidArgsError,
  ProtocolError,
  RemoteError,
  type RemoteClient,
} from '../client/index.ts';
import { SPEC_CALL_LIMITS, SYNC_CALL_LIMITS, type FileEntry, type FlowEntry } from '../protocol/index.ts';
import type { FlowLayout } from './flow-layout.ts';
import type { FlowRetries } from './flow-retries.ts';
import { checkServiceFile, refusedAnswer } from './service-answers.ts';
import type { Hasher, HashResult } from './hasher.ts';
import type { FlowPlan } from './planner.ts';
import { conflictFromService, recordConflicts } from './conflicts.ts';
import type { Me } from './reconcile.ts';
import type { SyncState } from './state.ts';
import type { FileConflict, FileRecord, FlowAck } from './state-records.ts';
import { isKeptAsOnService } from './three-way.ts';

// Under the service's caps per call (test/sync/chunking.test.ts checks every chunk against them).
export const MAX_FLOWS_PER_BATCH = Math.min(200, SYNC_CALL_LIMITS.flows);
export const MAX_BATCH_BYTES = Math.min(4 * 1024 * 1024, SYNC_CALL_LIMITS.contentBytes);
export const MAX_FILES_PER_BATCH = SYNC_CALL_LIMITS.files;
/** A flow's `files` (and `deletes`) is one array: the spec's platform takes at most 8,192 elements in one. */
export const MAX_FILES_PER_FLOW = SPEC_CALL_LIMITS.arrayElements;
export const MAX_IN_FLIGHT = 2;

export interface UploadTarget {
  root: string;
  owner: string;
  name: string;
  /** Who writes, for the service's history; unnamed when absent. */
  writer?: string;
}

/** What an upload needs: the service, the reader, and the outbox it records answers in as they arrive. */
export interface UploadContext {
  client: RemoteClient;
  hasher: Hasher;
  target: UploadTarget;
  /** This checkout's flows: a conflict the service names must be one of their files (service-answers.ts). */
  layout: FlowLayout;
  state: SyncState;
  repoId: number;
  /** Where a flow that fails alone (a 5xx for it while others go through) waits out its own back-off. */
  retries?: FlowRetries;
  /**
   * Who this checkout is, asked before the upload (reconcile.ts's whoIsMe): a refused write's version is its own
   * only if its member wrote it. Absent: the target's label alone (a service without members).
   */
  me?: Me;
}

/** A file whose change the service acknowledged: what it took, by name. */
export interface FileChange {
  kind: 'created' | 'updated' | 'deleted';
  flowPath: string;
  path: string;
}

/** The counts of one round of uploads; what the service confirmed is already in the state. */
export interface UploadTally {
  rejected: { flowPath: string; message: string }[];
  /** Files the service did not write because its version is not the one they were based on (recorded). */
  conflicts: Omit<FileConflict, 'foundAt'>[];
  /** The files whose change the service acknowledged, as the uploader sent them (no state is read again). */
  files: FileChange[];
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
  /** One part of a flow too large for one call: the parts of a flow go one after the other. */
  partOf?: string;
}

export interface BatchLimits {
  flows: number;
  bytes: number;
  /** Files per call; the service's cap unless given. */
  files?: number;
}

const LIMITS: BatchLimits = {
  flows: MAX_FLOWS_PER_BATCH,
  bytes: MAX_BATCH_BYTES,
  files: MAX_FILES_PER_BATCH,
};

/** Bytes a file adds to a request, estimated from its size (JSON escaping rarely adds more than a tenth). */
function estimatedBytes(file: FileRecord): number {
  return Math.ceil((file.size ?? 0) * 1.1) + file.path.length + 160;
}

/**
 * Groups plans into sync_batch requests of at most 200 flows, 4 MiB or 30,000 files. A full listing larger than
 * that goes alone (a listing cannot be cut: what it does not list is deleted); the changed files of a flow larger
 * than that are sent in parts, one request each.
 */
export function chunkPlans(plans: readonly FlowPlan[], full: boolean, limits = LIMITS): Batch[] {
  const maxFiles = limits.files ?? MAX_FILES_PER_BATCH;
  const batches: Batch[] = [];
  let current: FlowPlan[] = [];
  let bytes = 0;
  let count = 0;
  const flush = () => {
    if (current.length > 0) batches.push({ plans: current, full });
    current = [];
    bytes = 0;
    count = 0;
  };
  for (const plan of plans) {
    // Explicit deletions (with bases) count toward the service's cap on files per call too.
    const files = full ? plan.present : [...plan.upserts, ...(plan.bases ? plan.deletes : [])];
    const planBytes = files.reduce((sum, file) => sum + estimatedBytes(file), plan.flowPath.length + 64);
    const overArray =
      plan.upserts.length > MAX_FILES_PER_FLOW || (plan.bases && plan.deletes.length > MAX_FILES_PER_FLOW);
    if (!full && (files.length > maxFiles || planBytes > limits.bytes || overArray)) {
      flush();
      for (const part of partsOf(plan, limits.bytes, Math.min(maxFiles, MAX_FILES_PER_FLOW)))
        batches.push({ plans: [{ ...plan, ...part }], full, partOf: plan.flowPath });
      continue;
    }
    const over = bytes + planBytes > limits.bytes || count + files.length > maxFiles;
    if (current.length > 0 && (current.length >= limits.flows || over)) flush();
    current.push(plan);
    bytes += planBytes;
    count += files.length;
  }
  flush();
  return batches;
}

/**
 * A flow's changed files cut into parts under the limits (a file larger than the byte limit is a part alone),
 * then its explicit deletions (with bases) in parts of their own.
 */
function partsOf(
  plan: FlowPlan,
  maxBytes: number,
  maxFiles: number,
): { upserts: FileRecord[]; deletes: FileRecord[] }[] {
  const parts: { upserts: FileRecord[]; deletes: FileRecord[] }[] = [];
  let part: FileRecord[] = [];
  let bytes = plan.flowPath.length + 64;
  for (const file of plan.upserts) {
    const size = estimatedBytes(file);
    if (part.length > 0 && (part.length >= maxFiles || bytes + size > maxBytes)) {
      parts.push({ upserts: part, deletes: [] });
      part = [];
      bytes = plan.flowPath.length + 64;
    }
    part.push(file);
    bytes += size;
  }
  if (part.length > 0) parts.push({ upserts: part, deletes: [] });
  if (!plan.bases) return parts;
  for (let start = 0; start < plan.deletes.length; start += maxFiles)
    parts.push({ upserts: [], deletes: plan.deletes.slice(start, start + maxFiles) });
  return parts;
}

/**
 * The cap a flow's full listing would go over, named for its user; null when it fits in one call. A listing
 * cannot be sent in parts: each part with delete_missing would delete what the others carry.
 */
export function listingOverCap(plan: FlowPlan): string | null {
  const files = plan.present.length;
  const bytes = plan.present.reduce((sum, file) => sum + (file.size ?? 0), 0);
  const count = (n: number) => n.toLocaleString('en-US');
  const over =
    files > MAX_FILES_PER_FLOW
      ? `${count(files)} files, over the ${count(MAX_FILES_PER_FLOW)} files a service of the spec takes in one flow's listing`
      : bytes > SYNC_CALL_LIMITS.contentBytes
        ? `${(bytes / 1024 / 1024).toFixed(1)} MiB, over the service's cap of ${SYNC_CALL_LIMITS.contentBytes / 1024 / 1024} MiB per call`
        : null;
  return over;
}

/** A single changed file whose id the service gave us goes by update_file, the cheapest call. */
export function isSingleUpdate(plan: FlowPlan): boolean {
  const file = plan.upserts[0];
  // A flow that also deletes is a sync_batch: update_file carries no deletion, which was left pending.
  return (
    !plan.full &&
    plan.upserts.length === 1 &&
    plan.deletes.length === 0 &&
    Boolean(file?.fileId && file.ackedHash)
  );
}

/**
 * Sends plans to the service: update_file for a single changed file whose id is known, sync_batch otherwise
 * (full listings with delete_missing for flows that lost files or whose last request went unanswered, changed
 * files only for the rest, in parts when a flow is larger than one call takes), at most two requests in flight.
 * Each answer is recorded as it arrives. A flow the service fails to store while it stores others waits in
 * `context.retries`; connection failures, and server failures that are not one flow's, are thrown: the engine
 * retries later.
 */
export async function uploadPlans(
  context: UploadContext,
  plans: readonly FlowPlan[],
  onProgress: (flowsDone: number) => void = () => {},
): Promise<UploadTally> {
  const tally: UploadTally = {
    rejected: [],
    conflicts: [],
    files: [],
    flows: 0,
    created: 0,
    updated: 0,
    deleted: 0,
    requests: 0,
  };
  let flowsDone = 0;
  const done = (count: number) => onProgress((flowsDone += count));
  const stopped = new Set<string>();
  const refuseOne = (plan: FlowPlan, message: string) => {
    stopped.add(plan.flowPath);
    refuse(context, plan, message, tally);
    done(1);
  };
  const isolated: { plan: FlowPlan; error: unknown; before: boolean }[] = [];
  const isolation = isolationFor(context, (plan, error, before) => {
    isolated.push({ plan, error, before });
    stopped.add(plan.flowPath);
    done(1);
  });
  const sendable = plans.flatMap((plan) => fitted(plan, refuseOne));
  const singles = sendable.filter(isSingleUpdate);
  const send = (batch: Batch) =>
    sendWithBisection(
      batch.plans,
      (plans) =>
        sendBatch(context, { plans, full: batch.full }, tally).then(() => {
          if (batch.partOf === undefined) done(plans.length);
        }),
      refuseOne,
      isolation,
    );
  const tasks = [
    ...singles.map(
      (plan) => () =>
        sendWithBisection(
          [plan],
          () => updateOneFile(context, plan, tally).then(() => done(1)),
          refuseOne,
          isolation,
        ),
    ),
    ...groupParts(batchesOf(sendable.filter((plan) => !singles.includes(plan)))).map((group) => async () => {
      // The parts of one flow go one after the other, and stop at the first that does not go through.
      for (const batch of group) {
        if (batch.partOf !== undefined && stopped.has(batch.partOf)) return;
        await send(batch);
      }
      if (group[0]!.partOf !== undefined && !stopped.has(group[0]!.partOf)) done(1);
    }),
  ];
  await runInLanes(tasks, MAX_IN_FLIGHT);
  // Nothing of this upload went through, and no flow failed alone before: no flow is at fault more than another
  // (a gateway losing every answer), so the round backs off as a whole and shows it (offline), rather than each
  // flow waiting quietly on its own. A flow that failed alone while others went through stays on its own.
  if (tally.flows === 0 && isolated.length > 0 && !isolated.some((entry) => entry.before)) {
    for (const { plan } of isolated) context.retries?.succeeded(plan.flowPath);
    throw isolated[0]!.error;
  }
  return tally;
}

/**
 * A plan as it can be sent. A full listing over the service's caps per call cannot be cut in parts (each part
 * would delete what the others carry), and the spec has no other way to delete: a flow that lost files is refused
 * with the cap in the message. A flow listed whole only because an answer was lost sends all its files in parts
 * without delete_missing: the service ends with every file on disk.
 */
function fitted(plan: FlowPlan, refuseOne: (plan: FlowPlan, message: string) => void): FlowPlan[] {
  if (!plan.full) return [plan];
  const over = listingOverCap(plan);
  if (over === null) return [plan];
  if (plan.deletes.length === 0) return [{ ...plan, full: false, upserts: plan.present }];
  refuseOne(
    plan,
    `its ${plan.deletes.length.toLocaleString('en-US')} deleted files cannot be deleted on the service: a deletion lists the whole flow, and it has ${over}; split it into smaller flows`,
  );
  return [];
}

/** Consecutive parts of one flow in one group (sent in order), every other batch a group of its own. */
function groupParts(batches: readonly Batch[]): Batch[][] {
  const groups: Batch[][] = [];
  for (const batch of batches) {
    const last = groups[groups.length - 1];
    if (batch.partOf !== undefined && last?.[0]?.partOf === batch.partOf) last.push(batch);
    else groups.push([batch]);
  }
  return groups;
}

/**
 * Server failures (5xx) an upload may isolate by bisecting: one flow at fault among 200 costs 1 + 8 failed
 * requests (one per halving), two cost about 17. More, and the service is failing as a whole: the round backs off.
 */
const MAX_ISOLATED_FAILURES = 24;

/** How a server failure is narrowed down to the flows at fault while the service stores the others. */
function isolationFor(
  context: UploadContext,
  stop: (plan: FlowPlan, error: unknown, before: boolean) => void,
): Isolation<FlowPlan> | undefined {
  const { retries, client } = context;
  if (!retries) return undefined;
  let up = false;
  let failuresLeft = MAX_ISOLATED_FAILURES;
  return {
    failed: (plan, error) => {
      const before = retries.has(plan.flowPath);
      retries.failed(plan.flowPath, failureMessage(error));
      stop(plan, error, before);
    },
    alive: async () => {
      if (failuresLeft-- <= 0) return false;
      // Nothing stored yet this upload: a call that changes nothing tells a failing flow from a failing service.
      if (!up)
        up = await checkAccess(client).then(
          () => true,
          () => false,
        );
      return up;
    },
    answered: () => {
      up = true;
    },
  };
}

function failureMessage(error: unknown): string {
  if (error instanceof RemoteError) return `HTTP ${error.statusCode}: ${error.errorMessage}`;
  return error instanceof Error ? error.message : String(error);
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

/** How a server failure (5xx) of a request is narrowed down to the plans at fault. */
export interface Isolation<T> {
  /** The service failed this plan alone while it is up: it waits on its own, the others go on. */
  failed(plan: T, error: unknown): void;
  /** Whether the service is up (so a failure is the content's); false also when too many failed already. */
  alive(): Promise<boolean>;
  /** A request went through. */
  answered(): void;
}

/**
 * Sends plans with `send`; when the service refuses the request for its content, narrows it down to the flow at
 * fault (named by the refusal, else by halving) and hands that flow to `refuse` while the others go through.
 * With `isolate`, a server failure (5xx) while the service is up is narrowed down by halving too, and the flow at
 * fault handed to `isolate.failed`. Anything else (no answer, a service down, 429) is thrown.
 */
export async function sendWithBisection<T>(
  plans: readonly T[],
  send: (plans: T[]) => Promise<void>,
  refuse: (plan: T, message: string) => void,
  isolate?: Isolation<T>,
): Promise<void> {
  const again = (some: T[]) => sendWithBisection(some, send, refuse, isolate);
  const halves = async () => {
    const half = Math.ceil(plans.length / 2);
    await again(plans.slice(0, half));
    await again(plans.slice(half));
  };
  try {
    await send([...plans]);
    isolate?.answered();
  } catch (error) {
    const refusal = refusalOf(error);
    if (refusal === null) {
      if (!isolate || failureKind(error) !== 'server' || !(await isolate.alive())) throw error;
      if (plans.length === 1) isolate.failed(plans[0]!, error);
      else await halves();
      return;
    }
    const culprit = refusal.flowIndex === null ? undefined : plans[refusal.flowIndex];
    if (culprit !== undefined) {
      refuse(culprit, refusal.message);
      const others = plans.filter((plan) => plan !== culprit);
      if (others.length > 0) await again(others);
    } else if (plans.length === 1) {
      refuse(plans[0]!, refusal.message);
    } else {
      // The refusal does not say which flow: halve the batch until it does.
      await halves();
    }
  }
}

/** One sync_batch request: read the files, note the flows as sent, send, record the answer. */
async function sendBatch(context: UploadContext, batch: Batch, tally: UploadTally): Promise<void> {
  const { client, target, state, repoId } = context;
  const sent = await readEntries(context, batch);
  if (sent.length === 0) return;
  const flowPaths = sent.map(({ plan }) => plan.flowPath);
  state.markSending(
    repoId,
    sent.map(({ plan, entry }) => ({
      flowPath: plan.flowPath,
      sent: [
        ...entry.files.map((file) => ({ path: file.path, hash: file.hash })),
        ...(entry.deletes ?? []).map((file) => ({ path: file.path, hash: null })),
      ],
    })),
  );
  tally.requests++;
  try {
    const value = await client.flowDef.syncBatch(
      {
        repo_owner: target.owner,
        repo_name: target.name,
        flows: sent.map((entry) => entry.entry),
        delete_missing: batch.full,
      },
      writerOf(target),
    );
    // A success that does not count what was sent (a gateway's canned answer) stored nothing we can trust.
    if (value.flows_synced !== sent.length) {
      throw new ProtocolError(
        `The answer to sync_batch counts ${value.flows_synced} flows of the ${sent.length} sent; not taken as stored.`,
        'svc/flow_def/action/sync_batch/run',
        200,
      );
    }
    const ids = new Map((value.files ?? []).map((file) => [`${file.flow_path}\0${file.path}`, file.id]));
    // A flow with a conflict was left as it was, whole: nothing of it is acknowledged, its conflicts wait for
    // their user, and its other files go again next round without them.
    checkConflictsSent(
      context,
      'svc/flow_def/action/sync_batch/run',
      value.conflicts ?? [],
      sent,
      batch.full,
    );
    const conflicted = new Set((value.conflicts ?? []).map((conflict) => conflict.flow_path));
    if (conflicted.size > 0) {
      tally.conflicts.push(...recordConflicts(context, (value.conflicts ?? []).map(conflictFromService)));
      state.forgetSent(repoId, [...conflicted]);
    }
    const acks = sent
      .filter(({ plan }) => !conflicted.has(plan.flowPath))
      .map(({ plan, entry }) => {
        const sentPaths = new Set(entry.files.map((file) => file.path));
        return {
          flowPath: plan.flowPath,
          stored: entry.files.map((file) => ({
            path: file.path,
            hash: file.hash,
            fileId: ids.get(`${plan.flowPath}\0${file.path}`) ?? null,
          })),
          // With a full listing the service dropped whatever was not listed; with bases, what was named; else nothing.
          dropped: batch.full
            ? [...plan.deletes, ...plan.present].filter((f) => !sentPaths.has(f.path)).map((f) => f.path)
            : plan.bases
              ? plan.deletes.map((file) => file.path)
              : [],
        };
      });
    state.acknowledge(repoId, acks);
    const planOf = new Map(sent.map(({ plan }) => [plan.flowPath, plan]));
    for (const ack of acks) tally.files.push(...changesOf(planOf.get(ack.flowPath)!, ack));
    for (const flowPath of flowPaths) {
      state.clearRejection(repoId, flowPath);
      context.retries?.succeeded(flowPath);
    }
    tally.flows += value.flows_synced - conflicted.size;
    tally.created += value.files_created;
    tally.updated += value.files_updated;
    tally.deleted += value.files_deleted;
  } catch (error) {
    const plans = sent.map(({ plan }) => plan);
    forgetIfRefused(context, plans, error);
    // A refusal names the flow by its place in what was sent; the caller's places are those of the batch.
    if (plans.length < batch.plans.length && refusalOf(error) !== null)
      throw new RefusalOfSome(
        error,
        plans.map((plan) => batch.plans.indexOf(plan)),
      );
    throw error;
  }
}

/**
 * A conflict is taken only for a file the call sent (a file or a deletion of a flow sent; with a full listing, any
 * file of a flow sent): a service that names another, or a path outside this checkout's flows, gets its whole
 * answer refused, so its "service's version" is never written to disk by "take theirs".
 */
function checkConflictsSent(
  context: UploadContext,
  fn: string,
  conflicts: readonly { flow_path: string; path: string }[],
  sent: readonly { entry: { flow_path: string; files: { path: string }[]; deletes?: { path: string }[] } }[],
  full: boolean,
): void {
  if (conflicts.length === 0) return;
  const flows = new Map(sent.map(({ entry }) => [entry.flow_path, entry]));
  for (const conflict of conflicts) {
    checkServiceFile(context.layout, fn, conflict.flow_path, conflict.path);
    const entry = flows.get(conflict.flow_path);
    const named =
      entry !== undefined &&
      (full ||
        entry.files.some((file) => file.path === conflict.path) ||
        (entry.deletes ?? []).some((file) => file.path === conflict.path));
    if (!named)
      throw refusedAnswer(fn, `${conflict.flow_path}/${conflict.path}`, 'is not a file the call sent');
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
  state.markSending(repoId, [{ flowPath: plan.flowPath, sent: [{ path: file.path, hash: read.hash }] }]);
  tally.requests++;
  try {
    const record = await client.flowDef.updateFile(
      {
        fileId: file.fileId!,
        content: read.content,
        ...(plan.bases && file.ackedHash !== null ? { base_hash: file.ackedHash } : {}),
      },
      writerOf(target),
    );
    state.acknowledge(repoId, [
      {
        flowPath: plan.flowPath,
        stored: [{ path: file.path, hash: record.hash, fileId: record.id }],
        dropped: [],
      },
    ]);
    state.clearRejection(repoId, plan.flowPath);
    context.retries?.succeeded(plan.flowPath);
    tally.flows++;
    tally.updated++;
    if (record.hash !== file.ackedHash)
      tally.files.push({ kind: 'updated', flowPath: plan.flowPath, path: file.path });
  } catch (error) {
    const conflict = conflictOf(error);
    if (conflict !== null) {
      if (conflict.flow_path !== plan.flowPath || conflict.path !== file.path)
        throw refusedAnswer(
          'svc/flow_def/public/update_file',
          `${conflict.flow_path}/${conflict.path}`,
          `is not ${plan.flowPath}/${file.path}, the file sent`,
        );
      tally.conflicts.push(...recordConflicts(context, [conflictFromService(conflict)]));
      state.forgetSent(repoId, [plan.flowPath]);
      return;
    }
    forgetIfRefused(context, [plan], error);
    // The service lost the file (a reset database, a flow deleted elsewhere): forget the id, use sync_batch.
    if (reasonOf(error) !== 'refused') throw error;
    state.acknowledge(repoId, [{ flowPath: plan.flowPath, stored: [], dropped: [file.path] }]);
  }
}

/** The call options that name this checkout as the writer, for the service's history. */
function writerOf(target: UploadTarget): { writer?: string } {
  return target.writer === undefined ? {} : { writer: target.writer };
}

/** What an acknowledgement changed against what the service had acknowledged before (the plan's view). */
function changesOf(plan: FlowPlan, ack: FlowAck): FileChange[] {
  const before = new Map(
    [...plan.present, ...plan.deletes, ...plan.upserts].map((file) => [file.path, file.ackedHash]),
  );
  const changes: FileChange[] = [];
  for (const { path, hash } of ack.stored) {
    const was = before.get(path) ?? null;
    if (was !== hash)
      changes.push({ kind: was === null ? 'created' : 'updated', flowPath: plan.flowPath, path });
  }
  for (const path of ack.dropped)
    if ((before.get(path) ?? null) !== null) changes.push({ kind: 'deleted', flowPath: plan.flowPath, path });
  return changes;
}

/** A refusal means the service stored nothing of the request: its flows are known again (unless they were not before). */
function forgetIfRefused(context: UploadContext, plans: readonly FlowPlan[], error: unknown): void {
  if (refusalOf(error) === null) return;
  context.state.forgetSent(
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
    entries.get(plan)!.push({
      path: file.path,
      content: read.content,
      hash: read.hash,
      ...(plan.bases ? { base_hash: file.ackedHash } : {}),
    });
  });
  state.recordReads(repoId, records);
  // A full listing drops on the service whatever it does not list: a flow with a file that could not be read
  // just now (EMFILE, EACCES…), or that the service has and that is no longer sendable (grown over 1 MiB since it
  // was planned), is not sent this round, and its next plan keeps that file as the service has it.
  const held = new Set(
    wanted
      .filter(({ file }, index) => isUnreadable(reads[index]) || keptAsOnService(file, reads[index]))
      .map(({ plan }) => plan),
  );
  return batch.plans
    .filter((plan) => !(batch.full && held.has(plan)))
    .map((plan) => ({ plan, entry: entryOf(plan, entries.get(plan)!) }));
}

/** A flow as sent: its files, and with bases its deletions, each on the hash last acknowledged. */
function entryOf(plan: FlowPlan, files: FileEntry[]): FlowEntry {
  if (!plan.bases || plan.deletes.length === 0) return { flow_path: plan.flowPath, files };
  return {
    flow_path: plan.flowPath,
    files,
    deletes: plan.deletes.map((file) => ({ path: file.path, base_hash: file.ackedHash! })),
  };
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
 * A refusal that is about the content (the client's `failureKind` says `refused`: a function's error envelope with
 * words, flowsync's 400, 413, 422, a body over the platform's limit; or args our own checks refused), with the index
 * of the flow at fault when the error names it; null for anything worth retrying as it is (401, 404, 408, 429, 5xx,
 * a "Server Error" that says no more, an answer that cannot be read, no answer).
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
  if (!(error instanceof RemoteError) || failureKind(error) !== 'refused') return null;
  const issues = error.errorData.issues as { path?: unknown }[] | undefined;
  const path = (error.errorData.path as unknown[] | undefined) ?? issues?.[0]?.path;
  const message =
    reasonOf(error) === 'body_too_large'
      ? 'the flow is larger than the service accepts in one request'
      : `${error.errorMessage}${statusNote(error)}`;
  return { message, flowIndex: flowIndexOf(path) };
}

function flowIndexOf(path: unknown): number | null {
  if (!Array.isArray(path) || path[0] !== 'flows' || typeof path[1] !== 'number') return null;
  return path[1];
}

function keptAsOnService(file: FileRecord, read: HashResult | undefined): boolean {
  return (
    read !== undefined &&
    !read.missing &&
    isKeptAsOnService({ ...file, localHash: read.hash, warning: read.warning })
  );
}

function isUnreadable(read: HashResult | undefined): boolean {
  return read !== undefined && !read.missing && read.warning === 'unreadable';
}
