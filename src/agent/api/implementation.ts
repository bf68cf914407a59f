import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { userInfo } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import {
  InvalidArgsError,
  MissingCredentialsError,
  ProtocolError,
  RemoteError,
  TransportError,
} from '../../client/index.ts';
import {
  KeychainUnavailable,
  maskSecret,
  normalizeServiceUrl,
  secretStoreAuth,
} from '../../secrets/index.ts';
import type { Agent } from '../agent.ts';
import { checkSecret } from '../credentials.ts';
import {
  REPO_CONFIG_FILE,
  RepoConfigFileError,
  readRepoConfigFile,
  writeRepoConfigFile,
} from '../repo-config-file.ts';
import { myOpenTasks } from '../my-tasks.ts';
import { agentStatus, flowFiles, repositoryDetail, repositoryView } from '../status-view.ts';
import { AgentApiError, type AgentApi, type Settings } from './contract.ts';

const run = promisify(execFile);

/** The one implementation of AgentApi, over a running agent. Every transport serves this object. */
export function createAgentApi(agent: Agent): AgentApi {
  const view = (root: string) => repositoryView(agent, root);
  const status = () => agentStatus(agent);

  const settings = async (): Promise<Settings> => {
    const { secrets, secretsUrl } = agent;
    try {
      const [user, admin, apiKey] = await Promise.all([
        secrets.get(secretsUrl, 'access-token'),
        secrets.get(secretsUrl, 'admin-token'),
        secrets.get(secretsUrl, 'api-key'),
      ]);
      return {
        serviceUrl: agent.config.serviceUrl,
        activeServiceUrl: agent.serviceUrl,
        signedIn: {
          user: user !== null || agent.embedded !== null,
          admin: admin !== null || agent.embedded !== null,
        },
        apiKey: apiKey === null ? null : maskSecret(apiKey),
        keychain: 'available',
      };
    } catch (error) {
      if (!(error instanceof KeychainUnavailable)) throw error;
      return {
        serviceUrl: agent.config.serviceUrl,
        activeServiceUrl: agent.serviceUrl,
        signedIn: { user: agent.embedded !== null, admin: agent.embedded !== null },
        apiKey: null,
        keychain: 'unavailable',
      };
    }
  };

  const apiKey = async () => {
    const secret = await agent.secrets.get(agent.secretsUrl, 'api-key');
    if (!secret)
      throw new AgentApiError('refused', 'Add your personal API key in Settings to use the tracker.');
    return { secret, type: 'personal-api-key' as const };
  };

  const repository = (root: string | undefined) => {
    const watched = root ? agent.repositories.get(root) : agent.repositories.values().next().value;
    if (!watched)
      throw new AgentApiError(
        'not_found',
        root ? `${root} is not a repository flowsync syncs.` : 'Add a repository first.',
      );
    return watched;
  };

  const api: AgentApi = {
    status: async () => status(),

    addRepository: async ({ path }) => view((await agent.addAndStart(path)).identity.root),

    removeRepository: async ({ root }) => ({ removed: await agent.remove(root) }),

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
      const targets = root ? [repository(root)] : [...agent.repositories.values()];
      await Promise.all(targets.map(({ engine }) => engine.sync()));
      return status();
    },

    repositoryDetail: async ({ root }) => repositoryDetail(agent, root),

    flowFiles: async ({ root, flowPath }) => flowFiles(agent, root, flowPath),

    activity: async () => ({ entries: agent.activity.list() }),

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
        repo_remote_url: await remoteUrl(identity.root),
        user_email: await userEmail(identity.root),
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
      await checkSecret(agent.serviceUrl, kind, token, secretStoreAuth(agent.secrets, agent.secretsUrl));
      await agent.secrets.set(agent.secretsUrl, kind, token);
      return settings();
    },

    signOut: async () => {
      await agent.secrets.delete(agent.secretsUrl, 'access-token');
      await agent.secrets.delete(agent.secretsUrl, 'admin-token');
      return settings();
    },

    setApiKey: async ({ secret }) => {
      // With operator rights (always, for the embedded service) the key is registered as it is stored.
      const payload = {
        type: 'key-created' as const,
        hash: createHash('sha256').update(secret).digest('hex'),
        name: 'flowsync desktop',
        prefix_4: secret.slice(0, 4),
        suffix_4: secret.slice(-4),
        user_id: userInfo().username || 'me',
      };
      try {
        await agent.client.apiKey.addActivity({
          api_key_tid: `flowsync-${payload.hash.slice(0, 12)}`,
          ts: Date.now(),
          payload,
        });
      } catch (error) {
        if (
          !(error instanceof MissingCredentialsError) &&
          !(error instanceof RemoteError && error.statusCode === 403)
        )
          throw error;
      }
      await checkSecret(
        agent.serviceUrl,
        'api-key',
        secret,
        secretStoreAuth(agent.secrets, agent.secretsUrl),
      );
      await agent.secrets.set(agent.secretsUrl, 'api-key', secret);
      return settings();
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
        throw toAgentApiError(error);
      }
    };
  }
  return mapped as AgentApi;
}

export function toAgentApiError(error: unknown): AgentApiError {
  if (error instanceof AgentApiError) return error;
  if (error instanceof RemoteError) {
    const issues = Array.isArray(error.errorData.issues)
      ? (error.errorData.issues as { path: (string | number)[]; message: string }[])
      : undefined;
    return new AgentApiError(
      error.statusCode === 400 ? 'invalid_input' : 'refused',
      error.errorMessage,
      issues,
    );
  }
  if (error instanceof InvalidArgsError) {
    return new AgentApiError(
      'invalid_input',
      error.message,
      error.issues.map(({ path, message }) => ({ path, message })),
    );
  }
  if (error instanceof TransportError || error instanceof ProtocolError)
    return new AgentApiError('unavailable', error.message);
  if (error instanceof RepoConfigFileError) {
    return new AgentApiError(
      'invalid_input',
      error.message,
      error.issues.map(({ path, message }) => ({ path, message })),
    );
  }
  if (error instanceof MissingCredentialsError || error instanceof KeychainUnavailable) {
    return new AgentApiError('refused', error.message);
  }
  return new AgentApiError('internal', 'Something went wrong in the agent; its log has the details.');
}

async function git(root: string, ...args: string[]): Promise<string | null> {
  try {
    const { stdout } = await run('git', ['-C', root, ...args]);
    return stdout.trim() || null;
  } catch {
    return null;
  }
}

async function remoteUrl(root: string): Promise<string> {
  return (await git(root, 'config', '--get', 'remote.origin.url')) ?? `file://${root}`;
}

async function userEmail(root: string): Promise<string> {
  const email = await git(root, 'config', '--get', 'user.email');
  if (!email) {
    throw new AgentApiError(
      'refused',
      'Opening a task needs your email: run `git config --global user.email you@example.com`.',
    );
  }
  return email;
}
