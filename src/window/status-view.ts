import { configuredRepository, type Agent } from '../agent/index.ts';
import {
  AgentApiError,
  type AgentStatus,
  type FileView,
  type FlowView,
  type RepositoryView,
} from './contract.ts';
import { describeFileWarning, inSyncOfAll } from '../protocol/index.ts';
import type { FileState } from '../sync/index.ts';

/*
 * What the window shows of the agent's repositories, through the agent's read model (describe, files): running
 * or paused, a repository shows what the state knows of it (counts, last sync, files not sent, flows refused).
 */

export function agentStatus(agent: Agent): AgentStatus {
  return {
    serviceUrl: agent.serviceUrl,
    embedded: agent.embedded !== null,
    serviceLimits: agent.serviceInfo.knownLimits(),
    repositories: agent.roots().map((root) => repositoryView(agent, root)),
  };
}

/**
 * The one line the tray shows for all repositories, decided as everywhere else (inSyncOfAll): trouble first, then
 * what waits for its user, paused, pending, files newer on the service; "in sync" only when none of these.
 */
export function trayLine(status: AgentStatus): string {
  return `flowsync: ${inSyncOfAll(status.repositories).line}`;
}

export function repositoryView(agent: Agent, root: string): RepositoryView {
  const described = agent.describe(root);
  if (!described) throw notSynced(root);
  const { status } = described;
  const configured = configuredRepository(agent.config, root);
  return {
    root: described.root,
    owner: described.owner,
    name: described.name,
    flowRoots: described.flowRoots,
    settings: { owner: configured?.owner ?? null, name: configured?.name ?? null },
    // No engine: another checkout is its source (its reason says which), else paused while its folder is not there.
    phase: status ? status.phase : described.syncedFrom !== null ? 'elsewhere' : 'paused',
    message: status?.message ?? described.reason,
    paused: described.paused,
    pausedSince: described.pausedSince,
    nothingToSync: status?.nothingToSync ?? null,
    // Not synced (another checkout is its source): what it recorded while it was the source (its conflicts) waits
    // for nothing now, and the window asked for conflicts it cannot list (a 404 in Waiting for you).
    counts: described.syncedFrom ? { ...described.counts, conflicts: 0 } : described.counts,
    progress: described.progress,
    lastSyncAt: described.lastSyncAt,
    heldDeletions: status?.heldDeletions ?? 0,
    notInCheckout: status?.notInCheckout ?? 0,
    gitChanges: (status?.gitChanges ?? []).map(({ name, changed, deleted }) => ({ name, changed, deleted })),
    teammates: described.teammates,
    syncedFrom: described.syncedFrom,
    branch: described.branch,
    rename: described.rename,
    warnings: described.notSent.map((file) => ({ ...file, reason: describeFileWarning(file.warning) })),
    configProblem: described.configProblem,
    configNotSent: described.configNotSent,
    rejected: described.refused,
  };
}

/**
 * Each flow of a repository with its state. Reads every file record of the repository (200 ms at 100,000 files on
 * the 2-core build machine), so the window asks for it when the engine rests, not at each progress step.
 */
export function repositoryDetail(agent: Agent, root: string): { root: string; flows: FlowView[] } {
  const described = agent.describe(root);
  if (!described) throw notSynced(root);
  const refused = new Map(described.refused.map((r) => [r.flowPath, r.message]));
  const flows = new Map<string, FlowView>();
  for (const file of agent.files(root)) {
    const flow = flows.get(file.flowPath) ?? {
      flowPath: file.flowPath,
      name: file.flowPath.split('/').at(-1) ?? file.flowPath,
      files: 0,
      pending: 0,
      notSent: 0,
      conflicts: 0,
      newer: 0,
      state: 'synced',
      message: refused.get(file.flowPath) ?? null,
    };
    flows.set(file.flowPath, flow);
    if (file.localHash !== null) flow.files++;
    if (file.pending) flow.pending++;
    if (file.conflict) flow.conflicts++;
    if (file.behind) flow.newer++;
    if (fileState(file) === 'not-sent') flow.notSent++;
  }
  for (const flow of flows.values()) {
    flow.state = refused.has(flow.flowPath)
      ? 'refused'
      : flow.conflicts > 0
        ? 'conflict'
        : flow.pending > 0
          ? 'pending'
          : flow.newer > 0
            ? 'newer'
            : flow.notSent === flow.files
              ? 'not-sent'
              : 'synced';
  }
  // A flow whose files are all deleted and acknowledged is gone; one only deleted here is still pending.
  return {
    root,
    flows: [...flows.values()]
      .filter((flow) => flow.files > 0 || flow.pending > 0 || flow.conflicts > 0)
      .sort((a, b) => a.flowPath.localeCompare(b.flowPath)),
  };
}

/** The files of one flow, with why each is pending or not sent. */
export function flowFiles(agent: Agent, root: string, flowPath: string) {
  if (!agent.knows(root)) throw notSynced(root);
  const files: FileView[] = agent
    .files(root, flowPath)
    .filter((file) => file.localHash !== null || file.ackedHash !== null)
    .map((file) => {
      const reason = file.conflict
        ? "changed on the service since this checkout synced it: keep yours or take the service's"
        : file.behind
          ? 'newer on the service, unchanged here: take them (nothing here is lost)'
          : file.localHash === null
            ? 'deleted here: the service still has it'
            : file.warning !== null
              ? describeFileWarning(file.warning)
              : null;
      return { path: file.path, state: fileState(file), reason };
    });
  return { root, flowPath, files };
}

/** A file on disk that cannot be sent is `not-sent` (the service keeps its last version: not a deletion). */
function fileState(file: FileState): FileView['state'] {
  if (file.conflict) return 'conflict';
  if (file.behind) return 'newer';
  if (file.localHash !== null && file.warning !== null) return 'not-sent';
  return file.pending ? 'pending' : 'synced';
}

function notSynced(root: string): AgentApiError {
  return new AgentApiError('not_found', `${root} is not a repository flowsync syncs.`);
}
