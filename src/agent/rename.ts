import type { RepositoryConfig } from './config.ts';
import { identifyRepository, type RepositoryIdentity } from './repositories.ts';
import { tilde } from './source.ts';

/**
 * A checkout whose name is not the one it synced under with this service: its origin was renamed (`git remote
 * set-url`), added or removed, or the config's owner/name edited. It keeps syncing under the old name until its
 * user confirms: the old name's outbox would otherwise say "in sync" of files the new name on the service lacks.
 */
export interface PendingRename {
  /** The name it would sync under now. */
  to: RepositoryIdentity;
  /** "acme/app is now acme/app2 on origin: run `flowsync start ~/code/app --rename` to sync it under the new name…" */
  message: string;
}

/**
 * The rename waiting for a checkout that synced as `synced` (the state's name), or null when its name is the same.
 * Reads the git remote (a `git config` process), so it is asked at start, on add, at each periodic rescan and by
 * `flowsync status` only.
 */
export async function pendingRename(
  synced: RepositoryIdentity,
  configured?: RepositoryConfig,
): Promise<PendingRename | null> {
  return renameTo(synced, await identifyRepository(synced.root, configured));
}

/** The rename from the name a checkout synced under to the one it has `now`; null when they are the same. */
export function renameTo(
  synced: RepositoryIdentity,
  now: Awaited<ReturnType<typeof identifyRepository>>,
): PendingRename | null {
  if (now.owner === synced.owner && now.name === synced.name) return null;
  const from = `${synced.owner}/${synced.name}`;
  const to = `${now.owner}/${now.name}`;
  const where =
    now.namedBy === 'origin'
      ? ' on origin'
      : now.namedBy === 'config'
        ? ' in the config file'
        : ' (no origin)';
  return {
    to: { root: now.root, owner: now.owner, name: now.name },
    message:
      `${from} is now ${to}${where}: run \`flowsync start ${tilde(synced.root)} --rename\` to sync it under the ` +
      `new name (until then it syncs as ${from})`,
  };
}
