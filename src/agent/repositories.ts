import { basename } from 'node:path';
import { agentConfigSchema, type AgentConfig, type RepositoryConfig } from './config.ts';
import { checkRepositoryFolder, folderKey } from './folder-check.ts';
import { remoteUrl } from './git.ts';

export interface RepositoryIdentity {
  root: string;
  owner: string;
  name: string;
}

/**
 * owner/name of a git remote URL: `git@github.com:acme/app.git`, `https://github.com/acme/app`,
 * `ssh://git@host:22/group/sub/app.git` (owner = everything before the last segment). Null when unreadable.
 */
export function parseRemoteUrl(url: string): { owner: string; name: string } | null {
  const path = url
    .trim()
    .replace(/^[a-z+]+:\/\/[^/]+\//i, '')
    .replace(/^[^@/]+@[^:/]+:/, '')
    .replace(/\/+$/, '')
    .replace(/\.git$/, '');
  const segments = path.split('/').filter(Boolean);
  if (segments.length < 2) return null;
  return { owner: segments.slice(0, -1).join('/'), name: segments.at(-1)! };
}

/**
 * Who a folder is to the service: owner/name from its `origin` remote, else `local/<folder name>`; the config's
 * owner and name win. `namedBy` says which, for a line that tells of a rename.
 */
export async function identifyRepository(
  folder: string,
  configured?: RepositoryConfig,
): Promise<RepositoryIdentity & { namedBy: 'config' | 'origin' | 'folder' }> {
  const root = checkRepositoryFolder(folder);
  // Not a git repository, no origin, or no git: the folder name will do.
  const url = await remoteUrl(root);
  const fromRemote = url === null ? null : parseRemoteUrl(url);
  return {
    root,
    owner: configured?.owner ?? fromRemote?.owner ?? 'local',
    name: configured?.name ?? fromRemote?.name ?? basename(root),
    namedBy:
      configured?.owner !== undefined || configured?.name !== undefined
        ? 'config'
        : fromRemote
          ? 'origin'
          : 'folder',
  };
}

/** The config with this folder registered (once, by real path). */
export function withRepository(config: AgentConfig, folder: string): AgentConfig {
  const root = checkRepositoryFolder(folder);
  if (configuredRepository(config, root)) return config;
  return agentConfigSchema.parse({ ...config, repositories: [...config.repositories, { path: root }] });
}

/**
 * The config with a repository paused by its user (`enabled: false`, since `since`: a pause kept across restarts,
 * said by `status` and the window) or resumed. The one rule for both the running agent and `flowsync pause`.
 */
export function withPausedRepository(
  config: AgentConfig,
  folder: string,
  paused: { since: string } | null,
): AgentConfig {
  const set = (repo: RepositoryConfig): RepositoryConfig => {
    const { pausedAt: was, ...rest } = repo;
    if (!paused) return { ...rest, enabled: true };
    // Paused already: since the first pause, not the second.
    return { ...rest, enabled: false, pausedAt: repo.enabled ? paused.since : (was ?? paused.since) };
  };
  return {
    ...config,
    repositories: config.repositories.map((repo) => (sameFolder(repo.path, folder) ? set(repo) : repo)),
  };
}

/**
 * Whether its user paused a configured repository, and since when (null: paused by an older flowsync that did not
 * say); null when it is not paused. The one reading of `enabled: false` and `pausedAt`.
 */
export function pauseOf(configured: RepositoryConfig | undefined): { since: string | null } | null {
  return configured?.enabled === false ? { since: configured.pausedAt ?? null } : null;
}

/**
 * The config file's entry for this folder, however either is written (`./app`, `~/app`, `app/`, a link to it):
 * the one lookup of a configured repository by folder, so that its flow roots, owner and name are never missed.
 */
export function configuredRepository(config: AgentConfig, folder: string): RepositoryConfig | undefined {
  const key = folderKey(folder);
  return config.repositories.find((repo) => folderKey(repo.path) === key);
}

/** Whether two paths name one folder, read as configuredRepository reads them (a gone folder: by its path). */
export function sameFolder(a: string, b: string): boolean {
  return folderKey(a) === folderKey(b);
}

export { folderKey };
