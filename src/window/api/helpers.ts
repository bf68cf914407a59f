import { folderGone } from '../../protocol/index.ts';
import { keptWhere, type KeptFile } from '../../sync/index.ts';
import { KeychainUnavailable, SECRET_ENV_VARS, maskSecret, type SecretKind } from '../../secrets/index.ts';
import { SECRET_NAMES, type Agent, type WatchedRepository } from '../../agent/index.ts';
import { activityOf, type ActivityLog } from '../activity.ts';
import { agentStatus, repositoryView } from '../status-view.ts';
import { AgentApiError, type AgentStatus, type RepositoryView, type Settings } from '../contract.ts';

/** What the slices of the AgentApi share: the agent, its Recent activity, and the checks every action makes first. */
export interface ApiHelpers {
  agent: Agent;
  activity: ActivityLog;
  /** A repository's card, as the window lists it. */
  view(root: string): RepositoryView;
  status(): AgentStatus;
  /** A repository flowsync syncs, by its root (or the first one); refused in words otherwise. */
  repository(root: string | undefined): WatchedRepository;
  /** A repository for an action that sends to the service: refused while it is paused. */
  sending(root: string | undefined): WatchedRepository;
  /** The personal API key the tracker's calls are made with; refused, saying where to put one, without. */
  apiKey(): Promise<{ secret: string; type: 'personal-api-key' }>;
  settings(): Promise<Settings>;
  /** Refused, in one line, by a service of the spec alone, which cannot list its files. */
  listsItsFiles(): Promise<void>;
  /** Refused, in one line, by a service of the spec alone, which keeps no versions. */
  keepsHistory(): Promise<void>;
}

export function apiHelpers(agent: Agent): ApiHelpers {
  // Followed from now on: what happens before a window asks is in its Recent activity.
  const activity = activityOf(agent);

  const settings = async (): Promise<Settings> => {
    // One lookup per secret: a variable missing from the environment must not hide the ones that are set.
    const [user, admin, apiKey] = await Promise.all([
      agent.team.locateSecret('access-token'),
      agent.team.locateSecret('admin-token'),
      agent.team.locateSecret('api-key'),
    ]);
    const embedded = agent.embedded !== null;
    // The embedded service's tokens are the agent's own, kept or not.
    const tokenSource = (found: typeof user) =>
      found.secret === null && embedded ? ('embedded' as const) : found.source;
    return {
      serviceUrl: agent.config.serviceUrl,
      activeServiceUrl: agent.serviceUrl,
      activeServiceFrom: agent.serviceUrlFrom,
      signedIn: { user: user.secret !== null || embedded, admin: admin.secret !== null || embedded },
      sources: { user: tokenSource(user), admin: tokenSource(admin), apiKey: apiKey.source },
      apiKey: apiKey.secret === null ? null : maskSecret(apiKey.secret),
      keychain: [user, admin, apiKey].some((found) => found.source === 'unavailable')
        ? 'unavailable'
        : 'available',
    };
  };

  const apiKey = async () => {
    const { secret, source } = await agent.team.locateSecret('api-key');
    if (secret) return { secret, type: 'personal-api-key' as const };
    throw new AgentApiError(
      'refused',
      source === 'unavailable'
        ? `No personal API key, and no OS keychain to keep one: set ${SECRET_ENV_VARS['api-key']} in the agent's environment and restart it.`
        : `No personal API key yet: add it in Settings (or set ${SECRET_ENV_VARS['api-key']} in the agent's environment).`,
    );
  };

  const repository = (root: string | undefined) => {
    const watched = agent.find(root);
    // Its folder is not there (a drive not mounted): said as such, not as a folder flowsync does not know.
    if (!watched && root !== undefined && agent.missing().includes(root))
      throw new AgentApiError('refused', folderGone(root));
    if (!watched)
      throw new AgentApiError(
        'not_found',
        root ? `${root} is not a repository flowsync syncs.` : 'Add a repository first.',
      );
    return watched;
  };

  /**
   * A repository for an action that sends to the service (conflicts settled as mine, deletions sent): refused while
   * its user has it paused. A paused engine sends nothing, so the action did nothing and said "0 deleted", and a
   * deletion it allowed went at the resume, days later, without asking again.
   */
  const sending = (root: string | undefined) => {
    const watched = repository(root);
    const { owner, name, root: folder } = watched.identity;
    if (watched.engine.status().paused)
      throw new AgentApiError(
        'refused',
        `${owner}/${name} is paused: resume it first (Resume, or \`flowsync resume ${folder}\`), then settle this.`,
      );
    return watched;
  };

  /** A service of the spec alone cannot list its files: said in one line, rather than an empty list. */
  const listsItsFiles = async () => {
    const capabilities = await agent.serviceInfo.capabilities();
    if (capabilities && !capabilities.bases)
      throw new AgentApiError(
        'refused',
        `${agent.serviceUrl} cannot list its files (a service of the spec alone): what it has beyond this checkout cannot be known.`,
      );
  };

  /** A service of the spec alone keeps no versions: said in one line, before any call it would not know. */
  const keepsHistory = async () => {
    const capabilities = await agent.serviceInfo.capabilities();
    if (capabilities && !capabilities.history)
      throw new AgentApiError(
        'refused',
        `${agent.serviceUrl} keeps no history (a service of the spec alone): there are no versions to list or restore.`,
      );
  };

  return {
    agent,
    activity,
    view: (root) => repositoryView(agent, root),
    status: () => agentStatus(agent),
    repository,
    sending,
    apiKey,
    settings,
    listsItsFiles,
    keepsHistory,
  };
}

/** Kept copies as the window and the CLI show them: where, in words. */
export const keptViews = (files: readonly KeptFile[]) =>
  files.map((file) => ({
    flowPath: file.flowPath,
    path: file.path,
    version: file.version ?? null,
    beside: file.beside ?? null,
    where: keptWhere(file),
  }));

/** A file of a repository (a path relative to its root) as its flow and path; refused outside the flows. */
export const located = (
  engine: { locate(file: string): { flowPath: string; path: string } | null },
  file: string,
) => {
  const location = engine.locate(file.replaceAll('\\', '/').replace(/^\.\//, ''));
  if (!location)
    throw new AgentApiError('invalid_input', `${file} is not a file of a flow of this repository.`);
  return location;
};

/** A difference as the window shows it: what is on disk now (null: nothing) is always said, never left out. */
export function withDisk<T extends { diskHash?: string | null }>(file: T): T & { diskHash: string | null } {
  return { ...file, diskHash: file.diskHash ?? null };
}

/** Keeps a secret in the keychain; without one, says which variable to set instead. */
export async function keepSecret(agent: Agent, kind: SecretKind, secret: string): Promise<void> {
  try {
    await agent.team.keepSecret(kind, secret);
  } catch (error) {
    if (!(error instanceof KeychainUnavailable)) throw error;
    throw new AgentApiError(
      'refused',
      `No OS keychain is reachable to keep the ${SECRET_NAMES[kind]}: set ${SECRET_ENV_VARS[kind]} in the agent's environment and restart it.`,
    );
  }
}
