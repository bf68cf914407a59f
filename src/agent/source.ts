import { defaultStatePath, tilde } from '../host/index.ts';
import { recordedSource } from '../sync/index.ts';
import { AgentApiError } from './api-error.ts';
import { gitCommonDir } from './git.ts';
import type { RepositoryIdentity } from './repositories.ts';

/**
 * A checkout of a repository that another checkout is synced from, with this service: not synced, so that two
 * checkouts (a worktree and its repository, two clones, a copy) never overwrite and delete each other's files on
 * the service while both say "in sync". Its message names the source and the explicit way to switch.
 */
export class NotTheSource extends AgentApiError {
  constructor(
    readonly identity: RepositoryIdentity,
    readonly source: string,
    message: string,
  ) {
    super('invalid_input', message);
  }
}

/** "not syncing: acme/app is synced from ~/code/app (this folder is a worktree of it): …" */
export async function notTheSource(identity: RepositoryIdentity, source: string): Promise<NotTheSource> {
  const [here, there] = await Promise.all([gitCommonDir(identity.root), gitCommonDir(source)]);
  const what =
    here !== null && here === there
      ? ' (this folder is a worktree of it)'
      : here !== null && there !== null
        ? ' (this folder is another clone)'
        : '';
  return new NotTheSource(
    identity,
    source,
    `not syncing: ${identity.owner}/${identity.name} is synced from ${tilde(source)}${what}; ` +
      `\`flowsync start ${tilde(identity.root)} --source\` syncs from this checkout instead`,
  );
}

export { tilde };

/**
 * The checkout its repository is synced from with this service when it is another one than this (which is then
 * listed, not synced); null when this one is the source, or none is recorded yet (it becomes it at its first
 * sync). Read from the state without changing it, for `flowsync doctor`.
 */
export function sourceElsewhere(
  identity: RepositoryIdentity,
  service: string,
  statePath = defaultStatePath(),
): string | null {
  const source = recordedSource(statePath, service, identity.owner, identity.name);
  return source === null || source === identity.root ? null : source;
}
