import { join } from 'node:path';
import { configOfRecord, repoConfigSchema, type RepoConfigCurrent } from '../../protocol/index.ts';
import {
  REPO_CONFIG_FILE,
  readRepoConfigFile,
  repoConfigConflictLine,
  repoConfigOnDisk,
  type RepoConfigOnDisk,
} from '../../agent/index.ts';
import {
  AgentApiError,
  type AgentApi,
  type RepoConfigConflictView,
  type RepoConfigFileChange,
} from '../contract.ts';
import type { ApiHelpers } from './helpers.ts';

/**
 * A repository's config (`.flowsync/repo-config.json`): read, saved to its file and the service, and a conflict
 * with a teammate's newer one settled.
 */
export function repoConfigMethods({
  agent,
  repository,
  sending,
}: ApiHelpers): Pick<
  AgentApi,
  'getRepoConfig' | 'saveRepoConfig' | 'takeRepoConfigFile' | 'settleRepoConfig'
> {
  /** A running repository's config: its file, its base and its conflict. */
  const repoConfig = (root: string) => {
    const found = agent.repoConfigOf(repository(root).identity.root);
    if (!found) throw new AgentApiError('not_found', `${root} is not a repository flowsync syncs.`);
    return found;
  };
  const repoConfigView = (root: string) => {
    const { identity } = repository(root);
    const path = join(identity.root, REPO_CONFIG_FILE);
    // The base before the config: a hand edit between the two reads makes the next Save a conflict (safe), never
    // a base newer than the config the form shows (which would let the Save write over that edit).
    const base = repoConfigOnDisk(identity.root)?.base ?? null;
    const config = readRepoConfigFile(identity.root);
    const conflict = conflictView(repoConfig(root).conflict());
    return { root: identity.root, path, exists: config !== null, config: config ?? {}, base, conflict };
  };

  return {
    getRepoConfig: async ({ root }) => repoConfigView(root),

    saveRepoConfig: async ({ root, config, base, takeMine }) => {
      // The file first: changed since the screen loaded it, it is not written over. Then the service: if it refuses
      // or cannot be reached, nothing is saved anywhere; a teammate's newer config there keeps this one on disk,
      // unsent, as a conflict to settle.
      const saved = await repoConfig(root).save(config, base, takeMine ?? false);
      if (saved.fileChanged !== null)
        return { ...saved, conflict: null, fileChanged: fileChangeView(saved.fileChanged.now) };
      return {
        ...saved,
        fileChanged: null,
        conflict: saved.record === null ? conflictView(repoConfig(root).conflict()) : null,
      };
    },

    takeRepoConfigFile: async ({ root, config }) => {
      const keptAs = repoConfig(root).keepScreens(config);
      return { ...repoConfigView(root), keptAs };
    },

    settleRepoConfig: async ({ root, keep }) => {
      if (keep === 'mine') {
        await repoConfig(sending(root).identity.root).keepMine();
        return { ...repoConfigView(root), keptAs: null };
      }
      const keptAs = await repoConfig(root).takeService();
      return { ...repoConfigView(root), keptAs };
    },
  };
}

function conflictView(current: RepoConfigCurrent | null): RepoConfigConflictView | null {
  return (
    current && {
      config: configOfRecord(current),
      writtenBy: current.written_by,
      writtenAt: current.updated_at,
      line: repoConfigConflictLine(current),
    }
  );
}

function fileChangeView(onDisk: RepoConfigOnDisk | null): RepoConfigFileChange {
  if (!onDisk) return { base: null, text: null, config: null };
  const text = onDisk.bytes.toString('utf8');
  let config: RepoConfigFileChange['config'] = null;
  try {
    config = repoConfigSchema.parse(JSON.parse(text));
  } catch {
    // Not a valid config (a hand edit half done): shown as its text.
  }
  return { base: onDisk.base, text, config };
}
