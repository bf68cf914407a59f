import { execFile } from 'node:child_process';
import { realpathSync, statSync } from 'node:fs';
import { basename, resolve } from 'node:path';
import { promisify } from 'node:util';
import { agentConfigSchema, ConfigError, type AgentConfig, type RepositoryConfig } from './config.ts';

const run = promisify(execFile);

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

/** Who a folder is to the service: owner/name from its `origin` remote, else `local/<folder name>`. */
export async function identifyRepository(
  folder: string,
  configured?: RepositoryConfig,
): Promise<RepositoryIdentity> {
  const root = realpathSync(resolve(folder));
  if (!statSync(root).isDirectory()) throw new ConfigError(`${folder} is not a folder.`);
  let fromRemote: { owner: string; name: string } | null = null;
  try {
    const { stdout } = await run('git', ['-C', root, 'config', '--get', 'remote.origin.url']);
    fromRemote = parseRemoteUrl(stdout);
  } catch {
    fromRemote = null; // not a git repository, no origin, or no git: the folder name will do
  }
  return {
    root,
    owner: configured?.owner ?? fromRemote?.owner ?? 'local',
    name: configured?.name ?? fromRemote?.name ?? basename(root),
  };
}

/** The config with this folder registered (once, by real path). */
export function withRepository(config: AgentConfig, folder: string): AgentConfig {
  const root = existingFolder(folder);
  if (config.repositories.some((repo) => sameFolder(repo.path, root))) return config;
  return agentConfigSchema.parse({ ...config, repositories: [...config.repositories, { path: root }] });
}

/** The real path of a folder, or a one-line ConfigError naming what is wrong with it. */
export function existingFolder(folder: string): string {
  let root: string;
  try {
    root = realpathSync(resolve(folder));
  } catch {
    throw new ConfigError(`${folder} does not exist: give the folder of a repository.`);
  }
  if (!statSync(root).isDirectory())
    throw new ConfigError(`${folder} is not a folder: give the folder of a repository.`);
  return root;
}

/** Whether two paths name one folder (through symbolic links); plain comparison for a folder that is gone. */
export function sameFolder(a: string, b: string): boolean {
  try {
    return realpathSync(a) === realpathSync(b);
  } catch {
    return resolve(a) === resolve(b);
  }
}
