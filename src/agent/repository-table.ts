import type { SyncEngine, SyncProgress } from '../sync/index.ts';
import type { BranchFollower } from './branch-follower.ts';
import type { RepositoryConfig } from './config.ts';
import type { PendingRename } from './rename.ts';
import type { RepoConfigFilePublisher } from './repo-config-file.ts';
import type { RepositoryIdentity } from './repositories.ts';

export interface WatchedRepository {
  identity: RepositoryIdentity;
  engine: SyncEngine;
}

/** A repository synced by an engine (paused by its user too: it watches and counts, and sends nothing). */
export interface RunningEntry {
  kind: 'running';
  watched: WatchedRepository;
  /** Hand edits of its `.flowsync/repo-config.json`, pushed to the service. */
  configFile: RepoConfigFilePublisher;
  /** Its branch, from round to round. */
  branch: BranchFollower;
  /** The last progress of its long work, cleared when it finishes. */
  progress: SyncProgress | null;
}

/**
 * A repository of the config with no engine: not synced because another checkout of the same repository is its
 * source (`reason` says which), or paused while its folder is not there.
 */
export interface UnwatchedEntry extends RepositoryIdentity {
  kind: 'unwatched';
  flowRoots: string[];
  reason?: string;
  syncedFrom?: string;
}

/**
 * A repository of the config whose folder is not there (a drive not mounted, an empty mount point): `missing`,
 * nothing of it sent or deleted, looked for while the agent watches. Its owner/name are the config's, else the last
 * ones the state knew, else not known yet (`?`): an absent folder has no git remote to read, and is never taken for
 * `local/<folder>`.
 */
export interface AbsentEntry extends RepositoryIdentity {
  kind: 'absent';
  flowRoots: string[];
  configured: RepositoryConfig;
  /** Why it is not synced although its folder is there now (it cannot be read, its first sync failed); else null. */
  problem: string | null;
}

/** A repository the agent knows, and the rename waiting for it whatever its state (synced under the old name). */
export type RepositoryEntry = (RunningEntry | UnwatchedEntry | AbsentEntry) & { rename?: PendingRename };

/**
 * Every repository the agent knows, by root: one entry each, changed only through `update`, as GitHub Desktop's
 * `RepositoryStateCache.update`. It was seven maps (running, paused, absent, renames, branches, progress, config
 * files) changed in 37 places; "stop running" (two deletes) was written five times, and a root could sit in two.
 */
export class RepositoryTable {
  private readonly entries = new Map<string, RepositoryEntry>();

  get(root: string): RepositoryEntry | undefined {
    return this.entries.get(root);
  }

  /**
   * The one way an entry changes: `change` gets the entry (undefined: none) and returns the next one (undefined:
   * forgotten). A rename waiting stays with the root across its states unless `change` says otherwise.
   */
  update(root: string, change: (entry: RepositoryEntry | undefined) => RepositoryEntry | undefined): void {
    const before = this.entries.get(root);
    const after = change(before);
    if (after === undefined) this.entries.delete(root);
    else
      this.entries.set(
        root,
        before?.rename && !('rename' in after) ? { ...after, rename: before.rename } : after,
      );
  }

  /** The engine of a root, when it runs. */
  running(root: string): RunningEntry | undefined {
    const entry = this.entries.get(root);
    return entry?.kind === 'running' ? entry : undefined;
  }

  /** The repositories synced by an engine, in the order the agent came to know them. */
  watched(): WatchedRepository[] {
    return this.all().flatMap((entry) => (entry.kind === 'running' ? [entry.watched] : []));
  }

  all(): RepositoryEntry[] {
    return [...this.entries.values()];
  }

  roots(): string[] {
    return [...this.entries.keys()].sort();
  }

  /** A running entry that is this engine still (not stopped, replaced or removed meanwhile). */
  isRunning(watched: WatchedRepository): boolean {
    return this.running(watched.identity.root)?.watched === watched;
  }
}
