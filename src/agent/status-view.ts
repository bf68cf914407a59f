import type { Agent } from './agent.ts';
import {
  AgentApiError,
  type AgentStatus,
  type FileView,
  type FlowView,
  type RepositoryView,
} from './api/index.ts';
import { describeFileWarning } from '../protocol/index.ts';

/**
 * What the window shows of the agent's repositories, read from the agent and its state: running or paused, a
 * repository shows what the state file knows of it (counts, last sync, files not sent, flows refused).
 */

const NO_COUNTS = { flows: 0, files: 0, pending: 0, pendingFlows: 0, warnings: 0, rejected: 0 };

export function agentStatus(agent: Agent): AgentStatus {
  return {
    serviceUrl: agent.serviceUrl,
    embedded: agent.embedded !== null,
    repositories: [...agent.repositories.keys(), ...agent.paused.keys()]
      .sort()
      .map((root) => repositoryView(agent, root)),
  };
}

export function repositoryView(agent: Agent, root: string): RepositoryView {
  const watched = agent.repositories.get(root);
  const paused = agent.paused.get(root);
  if (!watched && !paused) throw notSynced(root);
  const identity = watched?.identity ?? paused!;
  const status = watched?.engine.status();
  const repoId = agent.stateIdOf(identity.root);
  const { state } = agent;
  const stored = repoId === null ? undefined : state.repos().find((repo) => repo.id === repoId);
  return {
    root: identity.root,
    owner: identity.owner,
    name: identity.name,
    flowRoots: [...(watched?.engine.flowRoots ?? paused!.flowRoots)],
    phase: status ? status.phase : 'paused',
    message: status?.message ?? null,
    counts: status?.counts ?? (repoId === null ? NO_COUNTS : state.counts(repoId)),
    progress: agent.progress.get(identity.root) ?? null,
    lastSyncAt: stored?.lastSyncAt ?? null,
    warnings:
      repoId === null
        ? []
        : state.warnings(repoId).map((file) => ({ ...file, reason: describeFileWarning(file.warning) })),
    configProblem: agent.configFiles.get(identity.root)?.problem ?? null,
    rejected:
      repoId === null ? [] : state.rejections(repoId).map(({ flowPath, message }) => ({ flowPath, message })),
  };
}

/**
 * Each flow of a repository with its state. Reads every file record of the repository (200 ms at 100,000 files on
 * the 2-core build machine), so the window asks for it when the status settles, not at each progress step.
 */
export function repositoryDetail(agent: Agent, root: string): { root: string; flows: FlowView[] } {
  const repoId = repoIdOf(agent, root);
  if (repoId === null) return { root, flows: [] };
  const refused = new Map(agent.state.rejections(repoId).map((r) => [r.flowPath, r.message]));
  const flows = new Map<string, FlowView>();
  for (const file of agent.state.files(repoId)) {
    const flow = flows.get(file.flowPath) ?? {
      flowPath: file.flowPath,
      name: file.flowPath.split('/').at(-1) ?? file.flowPath,
      files: 0,
      pending: 0,
      notSent: 0,
      state: 'synced',
      message: refused.get(file.flowPath) ?? null,
    };
    flows.set(file.flowPath, flow);
    if (file.localHash !== null) flow.files++;
    if (isPending(file)) flow.pending++;
    if (fileState(file) === 'not-sent') flow.notSent++;
  }
  for (const flow of flows.values()) {
    flow.state = refused.has(flow.flowPath)
      ? 'refused'
      : flow.pending > 0
        ? 'pending'
        : flow.notSent === flow.files
          ? 'not-sent'
          : 'synced';
  }
  // A flow whose files are all deleted and acknowledged is gone; one only deleted here is still pending.
  return {
    root,
    flows: [...flows.values()]
      .filter((flow) => flow.files > 0 || flow.pending > 0)
      .sort((a, b) => a.flowPath.localeCompare(b.flowPath)),
  };
}

/** The files of one flow, with why each is pending or not sent. */
export function flowFiles(agent: Agent, root: string, flowPath: string) {
  const repoId = repoIdOf(agent, root);
  const stored = repoId === null ? [] : agent.state.filesOfFlow(repoId, flowPath);
  const files: FileView[] = stored
    .filter((file) => file.localHash !== null || file.ackedHash !== null)
    .map((file) => {
      const reason =
        file.localHash === null
          ? 'deleted here: the service still has it'
          : file.warning !== null
            ? describeFileWarning(file.warning)
            : null;
      return { path: file.path, state: fileState(file), reason };
    });
  return { root, flowPath, files };
}

interface StoredFile {
  localHash: string | null;
  warning: string | null;
  ackedHash: string | null;
}

/**
 * The state's own rule (src/sync/state.ts, PENDING): what should be on the service is the file's hash unless it
 * is gone or cannot be sent; it is pending while that is not what the service acknowledged.
 */
function isPending(file: StoredFile): boolean {
  // A file that could not be read now is not pending: what the service has of it stands until it is read again.
  const wanted =
    file.warning === null ? file.localHash : file.warning === 'unreadable' ? file.ackedHash : null;
  return wanted !== file.ackedHash;
}

/** A file on disk that cannot be sent is `not-sent` (even while its old copy waits to be deleted). */
function fileState(file: StoredFile): FileView['state'] {
  if (file.localHash !== null && file.warning !== null) return 'not-sent';
  return isPending(file) ? 'pending' : 'synced';
}

function repoIdOf(agent: Agent, root: string): number | null {
  if (!agent.repositories.has(root) && !agent.paused.has(root)) throw notSynced(root);
  return agent.stateIdOf(root);
}

function notSynced(root: string): AgentApiError {
  return new AgentApiError('not_found', `${root} is not a repository flowsync syncs.`);
}
