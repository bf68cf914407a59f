import { join } from 'node:path';
import { RemoteError } from '../client/index.ts';
import { folderGone } from '../protocol/index.ts';
import {
  KeychainUnavailable,
  SECRET_ENV_VARS,
  maskSecret,
  normalizeServiceUrl,
  type SecretKind,
} from '../secrets/index.ts';
import type { Agent } from '../agent/index.ts';
import { reportIncident } from '../host/index.ts';
import { classifyError, remoteUrl, userEmail } from '../agent/index.ts';
import { SECRET_NAMES, checkSecret } from '../agent/index.ts';
import {
  claimKey,
  keyOwnerView,
  registerKey,
  trackerUsers,
  unclaimedLine,
  unusable,
} from '../agent/index.ts';
import { REPO_CONFIG_FILE, readRepoConfigFile, writeRepoConfigFile } from '../agent/index.ts';
import { activityOf } from './activity.ts';
import { myOpenTasks } from './my-tasks.ts';
import { setStartAtLogin, startAtLogin } from '../host/index.ts';
import { agentStatus, flowFiles, repositoryDetail, repositoryView } from './status-view.ts';
import { AgentApiError, type AgentApi, type Settings } from './contract.ts';

/** The one implementation of AgentApi, over a running agent. Every transport serves this object. */
export function createAgentApi(agent: Agent): AgentApi {
  // Followed from now on: what happens before a window asks is in its Recent activity.
  const activity = activityOf(agent);
  const view = (root: string) => repositoryView(agent, root);
  const status = () => agentStatus(agent);

  const settings = async (): Promise<Settings> => {
    const { secrets, secretsUrl } = agent;
    // One lookup per secret: a variable missing from the environment must not hide the ones that are set.
    const [user, admin, apiKey] = await Promise.all([
      secrets.locate(secretsUrl, 'access-token'),
      secrets.locate(secretsUrl, 'admin-token'),
      secrets.locate(secretsUrl, 'api-key'),
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
    const { secret, source } = await agent.secrets.locate(agent.secretsUrl, 'api-key');
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

  /** A file of a repository (a path relative to its root) as its flow and path; refused outside the flows. */
  const located = (
    engine: { locate(file: string): { flowPath: string; path: string } | null },
    file: string,
  ) => {
    const location = engine.locate(file.replaceAll('\\', '/').replace(/^\.\//, ''));
    if (!location)
      throw new AgentApiError('invalid_input', `${file} is not a file of a flow of this repository.`);
    return location;
  };

  /** A service of the spec alone cannot list its files: said in one line, rather than an empty list. */
  const listsItsFiles = async () => {
    const capabilities = await agent.capabilities();
    if (capabilities && !capabilities.bases)
      throw new AgentApiError(
        'refused',
        `${agent.serviceUrl} cannot list its files (a service of the spec alone): what it has beyond this checkout cannot be known.`,
      );
  };

  /** A service of the spec alone keeps no versions: said in one line, before any call it would not know. */
  const keepsHistory = async () => {
    const capabilities = await agent.capabilities();
    if (capabilities && !capabilities.history)
      throw new AgentApiError(
        'refused',
        `${agent.serviceUrl} keeps no history (a service of the spec alone): there are no versions to list or restore.`,
      );
  };

  const api: AgentApi = {
    status: async () => status(),

    addRepository: async ({ path, source, rename }) =>
      view(
        (await agent.addAndStart(path, { source: source === true, rename: rename === true })).identity.root,
      ),

    removeRepository: async ({ root }) => ({ removed: await agent.remove(root) }),

    setRepositorySettings: async ({ root, flowRoots, owner, name }) => {
      await agent.setRepositorySettings(root, {
        flowRoots,
        owner: owner === '' ? null : owner,
        name: name === '' ? null : name,
      });
      return view(root);
    },

    pauseRepository: async ({ root }) => {
      view(root);
      await agent.pause(root);
      return view(root);
    },

    resumeRepository: async ({ root }) => {
      view(root);
      await agent.resume(root);
      return view(root);
    },

    syncNow: async ({ root }) => {
      if (root) repository(root);
      await agent.syncNow(root);
      return status();
    },

    repositoryDetail: async ({ root }) => repositoryDetail(agent, root),

    flowFiles: async ({ root, flowPath }) => flowFiles(agent, root, flowPath),

    activity: async () => ({ entries: activity.list() }),

    conflicts: async ({ root }) => {
      const { identity, engine } = repository(root);
      return {
        root: identity.root,
        conflicts: agent.conflicts(identity.root),
        heldDeletions: engine.status().heldDeletions,
        newer: engine.service.newer(),
      };
    },

    takeNewer: async ({ root }) => await sending(root).engine.service.takeNewer(),

    resolveConflicts: async ({ root, side, files }) => {
      const { engine } = sending(root);
      return await engine.service.resolve(files ?? null, side);
    },

    compareConflict: async ({ root, flowPath, path }) => {
      const { engine } = repository(root);
      const compared = await engine.service.compare(flowPath, path);
      if (!compared)
        throw new AgentApiError('not_found', `${flowPath}/${path} is not in conflict (settled already?).`);
      return { flowPath, path, ...compared };
    },

    fileHistory: async ({ root, file }) => {
      const { engine } = repository(root);
      await keepsHistory();
      const { flowPath, path } = located(engine, file);
      const versions = await engine.service.history(flowPath, path);
      const capped = await engine.service.historyCapped(flowPath, path);
      return {
        flowPath,
        path,
        capped,
        versions: versions.map((v) => ({
          version: v.version,
          hash: v.hash,
          size: v.size,
          writtenAt: v.written_at,
          writtenBy: v.written_by,
          current: v.current,
        })),
      };
    },

    versionContent: async ({ root, file, version }) => {
      const { engine } = repository(root);
      await keepsHistory();
      const { flowPath, path } = located(engine, file);
      return { flowPath, path, version, ...(await engine.service.showVersion(flowPath, path, version)) };
    },

    restoreVersion: async ({ root, file, version }) => {
      const { engine } = repository(root);
      await keepsHistory();
      const { flowPath, path } = located(engine, file);
      const { deleted } = await engine.service.restoreVersion(flowPath, path, version);
      return { flowPath, path, version, deleted };
    },

    settleDeletions: async ({ root, choice }) => {
      if (choice === 'restore')
        return { deleted: 0, ...(await repository(root).engine.service.restoreDeleted()) };
      return { deleted: await sending(root).engine.sendHeldDeletions(), restored: 0, notWritten: [] };
    },

    notInCheckout: async ({ root }) => {
      const { identity, engine } = repository(root);
      await listsItsFiles();
      const files = await engine.service.filesNotInCheckout();
      return {
        root: identity.root,
        files: files.map(({ flowPath, path, hash, writtenBy, writtenAt }) => ({
          flowPath,
          path,
          hash,
          writtenBy,
          writtenAt,
        })),
      };
    },

    settleNotInCheckout: async ({ root, choice, files }) => {
      const { engine } = choice === 'restore' ? repository(root) : sending(root);
      await listsItsFiles();
      if (choice === 'restore') return { deleted: 0, ...(await engine.service.restoreNotInCheckout(files)) };
      // The deletions go by the held-deletion guard's allowance, which would send the held ones along.
      const held = engine.status().heldDeletions;
      if (held > 0)
        throw new AgentApiError(
          'refused',
          `${held} deletions are held in ${root}: settle them first (Delete them on the service, or Restore them on disk), then these.`,
        );
      return { deleted: await engine.service.deleteNotInCheckout(files), restored: 0, skipped: [] };
    },

    myTasks: async ({ after }) => myOpenTasks(agent.client, await apiKey(), after),

    searchTasks: async ({ query, after, first }) =>
      agent.client.tracker.searchIssues({
        api_key: await apiKey(),
        query,
        ...((after !== undefined || first !== undefined) && { pagination: { after, first } }),
      }),

    openTask: async ({ taskKey, root }) => {
      const { identity } = repository(root);
      return agent.client.task.syncTask({
        task_key: taskKey,
        repo_remote_url: await repoRemoteUrl(identity.root),
        user_email: await requiredUserEmail(identity.root),
      });
    },

    updateTask: async ({ taskKey, status: newStatus, priority, recursive }) =>
      agent.client.task.update({ task_key: taskKey, status: newStatus, priority, recursive }),

    workflowStates: async ({ teamId }) =>
      agent.client.tracker.workflowStateCacheGetByTeam({ team_id: teamId }),

    getRepoConfig: async ({ root }) => {
      const { identity } = repository(root);
      const path = join(identity.root, REPO_CONFIG_FILE);
      const config = readRepoConfigFile(identity.root);
      return { root: identity.root, path, exists: config !== null, config: config ?? {} };
    },

    saveRepoConfig: async ({ root, config }) => {
      const { identity } = repository(root);
      // The service first: if it refuses or cannot be reached, nothing is saved anywhere.
      const record = await agent.client.repoConfig.update({
        owner: identity.owner,
        name: identity.name,
        ...config,
      });
      return { path: writeRepoConfigFile(identity.root, config), record };
    },

    getSettings: settings,

    saveSettings: async ({ serviceUrl }) => {
      const trimmed = serviceUrl.trim();
      if (trimmed !== '') {
        try {
          const url = new URL(trimmed);
          if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new Error('scheme');
        } catch {
          throw new AgentApiError('invalid_input', 'The service URL must start with http:// or https://.', [
            { path: ['serviceUrl'], message: 'Give a URL like https://flows.example.com, or leave it empty' },
          ]);
        }
      }
      agent.updateConfig({ ...agent.config, serviceUrl: trimmed === '' ? '' : normalizeServiceUrl(trimmed) });
      return settings();
    },

    signIn: async ({ token, admin }) => {
      const kind = admin ? 'admin-token' : 'access-token';
      await checkSecret(agent.serviceUrl, kind, token);
      await keepSecret(agent, kind, token);
      return settings();
    },

    signOut: async () => {
      // The embedded service's tokens are the agent's own: deleting them signed the agent out of its own service.
      if (agent.embedded)
        throw new AgentApiError(
          'invalid_input',
          'The embedded service signs this agent in by itself: there is nothing to sign out of. To use another ' +
            'service, set its URL above.',
        );
      await agent.secrets.delete(agent.secretsUrl, 'access-token');
      await agent.secrets.delete(agent.secretsUrl, 'admin-token');
      return settings();
    },

    setApiKey: async ({ secret }) => {
      // Kept first: a key the agent cannot keep is never registered with the service.
      await keepSecret(agent, 'api-key', secret);
      try {
        const claim = await claimKey(agent.client, secret);
        // Unknown to the service, and this agent may not register it: no use keeping it. A key that is nobody's
        // but that an operator may register (Settings lists whom) is kept for the user to say who they are.
        if (claim.outcome === 'unclaimed' && unusable(claim))
          throw new AgentApiError('refused', unclaimedLine(claim, agent.serviceUrl));
      } catch (error) {
        // Not usable after all: do not leave a key in the keychain that the service refuses.
        await agent.secrets.delete(agent.secretsUrl, 'api-key').catch(() => false);
        throw error;
      }
      return settings();
    },

    setKeyOwner: async ({ userId }) => {
      const { secret } = await apiKey();
      const users = await trackerUsers(agent.client);
      if (users === null)
        throw new AgentApiError(
          'refused',
          "Only an operator of the service can say whose key this is: sign in with an admin token first (or ask the service's operator).",
        );
      if (!users.some((user) => user.id === userId))
        throw new AgentApiError('not_found', `The tracker has no user ${userId}: pick one of the list.`);
      await registerKey(agent.client, secret, userId);
      return keyOwnerView(agent.client, secret, agent.serviceUrl);
    },

    whoYouAre: async () => {
      const { secret } = await agent.secrets.locate(agent.secretsUrl, 'api-key');
      return secret === null ? null : keyOwnerView(agent.client, secret, agent.serviceUrl);
    },

    getStartAtLogin: async () => startAtLogin(),

    setStartAtLogin: async ({ enabled }) => {
      try {
        return setStartAtLogin(enabled);
      } catch (error) {
        // systemctl refusing, or a folder that cannot be written: the machine's, not a bug of ours.
        throw new AgentApiError(
          'unavailable',
          `Start at login could not be changed: ${(error as Error).message}`,
        );
      }
    },
  };
  return withErrorMapping(api);
}

/** Errors of the parts below become AgentApiErrors with a message a person can act on. */
function withErrorMapping(api: AgentApi): AgentApi {
  const mapped = {} as Record<string, (input: never) => Promise<unknown>>;
  for (const [name, method] of Object.entries(api) as [string, (input: never) => Promise<unknown>][]) {
    mapped[name] = async (input) => {
      try {
        return await method(input);
      } catch (error) {
        throw toAgentApiError(error, name);
      }
    };
  }
  return mapped as AgentApi;
}

/**
 * The AgentApi error for anything thrown below: the one classifier decides; a bug gets an incident id that is in
 * the agent's log, and the answer names the log.
 */
export function toAgentApiError(error: unknown, method?: string): AgentApiError {
  if (error instanceof AgentApiError) return error;
  const classified = classifyError(error);
  if (classified) {
    // The window shows the service's own words, unless the classifier has its own (an unknown API key: what to do,
    // not the protocol's words); the function, status and trace id are for the CLI's line.
    const message =
      error instanceof RemoteError && classified.message === error.message
        ? error.errorMessage
        : classified.message;
    return new AgentApiError(classified.apiCode, message, classified.issues);
  }
  const incident = reportIncident(error, { method });
  return new AgentApiError(
    'internal',
    `Something went wrong in the agent (incident ${incident.id}); ${incident.details}.`,
  );
}

/** Keeps a secret in the keychain; without one, says which variable to set instead. */
async function keepSecret(agent: Agent, kind: SecretKind, secret: string): Promise<void> {
  try {
    await agent.secrets.set(agent.secretsUrl, kind, secret);
  } catch (error) {
    if (!(error instanceof KeychainUnavailable)) throw error;
    throw new AgentApiError(
      'refused',
      `No OS keychain is reachable to keep the ${SECRET_NAMES[kind]}: set ${SECRET_ENV_VARS[kind]} in the agent's environment and restart it.`,
    );
  }
}

/** The origin remote's URL, else the folder's own address: a task is opened for a repository without a remote too. */
async function repoRemoteUrl(root: string): Promise<string> {
  return (await remoteUrl(root)) ?? `file://${root}`;
}

async function requiredUserEmail(root: string): Promise<string> {
  const email = await userEmail(root);
  if (!email) {
    throw new AgentApiError(
      'refused',
      'Opening a task needs your email: run `git config --global user.email you@example.com`.',
    );
  }
  return email;
}
