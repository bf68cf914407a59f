import { join } from 'node:path';
import { RemoteError, reasonOf } from '../client/index.ts';
import {
  configOfRecord,
  repoConfigSchema,
  folderGone,
  incomingCounts,
  TAKEN_WORDS,
  plural,
  changeSetWords,
  workflowStateTeams,
  type HistoryPurge,
  type RepoConfigCurrent,
  type WorkflowStateCacheValue,
  whoWrote,
} from '../protocol/index.ts';
import { DeletionsNotConfirmed, keptWhere, lookView, type KeptFile, type TakenFile } from '../sync/index.ts';
import {
  KeychainUnavailable,
  SECRET_ENV_VARS,
  maskSecret,
  normalizeServiceUrl,
  type SecretKind,
} from '../secrets/index.ts';
import type { Agent, WatchedRepository } from '../agent/index.ts';
import { logUnexpected, reportIncident } from '../host/index.ts';
import { classifyError, remoteUrl, userEmail } from '../agent/index.ts';
import { NotTheSource, SECRET_NAMES, checkSecret } from '../agent/index.ts';
import {
  claimKey,
  gitEmails,
  keyOwnerView,
  registerKey,
  trackerUsers,
  unclaimedLine,
  unusable,
} from '../agent/index.ts';
import {
  REPO_CONFIG_FILE,
  readRepoConfigFile,
  repoConfigConflictLine,
  repoConfigOnDisk,
  type RepoConfigOnDisk,
} from '../agent/index.ts';
import { activityOf } from './activity.ts';
import { membershipMethods } from './api/membership.ts';
import { setStartAtLogin, startAtLogin } from '../host/index.ts';
import { agentStatus, flowFiles, repositoryDetail, repositoryView } from './status-view.ts';
import {
  AgentApiError,
  type AgentApi,
  type RepoConfigConflictView,
  type RepoConfigFileChange,
  type Settings,
} from './contract.ts';

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

  /** Kept copies as the window and the CLI show them: where, in words. */
  const keptViews = (files: readonly KeptFile[]) =>
    files.map((file) => ({
      flowPath: file.flowPath,
      path: file.path,
      version: file.version ?? null,
      beside: file.beside ?? null,
      where: keptWhere(file),
    }));

  /**
   * What its user settled, in Recent activity: a line per file (with where its bytes here were kept), or one line
   * for many; a copy kept is always its own line, so that it can be found.
   */
  /**
   * Every take of the team's changes is in Recent activity, and so a line in the running agent's terminal (issue
   * 46: 217 files deleted by one click, said nowhere): a few files each, more as one entry with the counts.
   */
  const takenEntries = (watched: WatchedRepository, taken: readonly TakenFile[]) => {
    if (taken.length === 0) return;
    if (taken.length > TAKEN_NAMED) {
      const message = `${plural(taken.length, 'file')} taken from the service: ${incomingCounts(taken)}`;
      activity.record(watched, { kind: 'taken', flowPath: null, path: null, message });
      return;
    }
    for (const { flowPath, path, change } of taken)
      activity.record(watched, { kind: 'taken', flowPath, path, message: TAKEN_WORDS[change] });
  };
  const settledEntries = (
    watched: WatchedRepository,
    files: readonly { flowPath: string; path: string }[],
    kept: ReturnType<typeof keptViews>,
    what: string,
  ) => {
    const keptAt = new Map(kept.map((file) => [`${file.flowPath}/${file.path}`, file.where]));
    if (files.length > 20) {
      activity.record(watched, {
        kind: 'settled',
        flowPath: null,
        path: null,
        message: `${plural(files.length, 'conflict')} settled: ${what}`,
      });
    } else {
      for (const { flowPath, path } of files) {
        const where = keptAt.get(`${flowPath}/${path}`);
        keptAt.delete(`${flowPath}/${path}`);
        const message = where ? `${what}; yours is ${where}` : what;
        activity.record(watched, { kind: 'settled', flowPath, path, message });
      }
    }
    for (const [file, where] of keptAt) {
      const slash = file.lastIndexOf('/');
      activity.record(watched, {
        kind: 'settled',
        flowPath: file.slice(0, slash),
        path: file.slice(slash + 1),
        message: `what was on disk is ${where}`,
      });
    }
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

  /** A running repository's config: its file, its base and its conflict. */
  const repoConfig = (root: string) => {
    const found = agent.repoConfigOf(repository(root).identity.root);
    if (!found) throw new AgentApiError('not_found', `${root} is not a repository flowsync syncs.`);
    return found;
  };
  const conflictView = (current: RepoConfigCurrent | null): RepoConfigConflictView | null =>
    current && {
      config: configOfRecord(current),
      writtenBy: current.written_by,
      writtenAt: current.updated_at,
      line: repoConfigConflictLine(current),
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
  const fileChangeView = (onDisk: RepoConfigOnDisk | null): RepoConfigFileChange => {
    if (!onDisk) return { base: null, text: null, config: null };
    const text = onDisk.bytes.toString('utf8');
    let config: RepoConfigFileChange['config'] = null;
    try {
      config = repoConfigSchema.parse(JSON.parse(text));
    } catch {
      // Not a valid config (a hand edit half done): shown as its text.
    }
    return { base: onDisk.base, text, config };
  };

  const api: AgentApi = {
    ...membershipMethods(agent),
    status: async () => status(),

    addRepository: async ({ path, source, rename }) => {
      try {
        const added = await agent.addAndStart(path, { source: source === true, rename: rename === true });
        return view(added.identity.root);
      } catch (error) {
        // Another checkout is its source: listed now, its card says so and offers "Sync from this checkout
        // instead" (the window showed the CLI's command in a red line, and no card).
        if (error instanceof NotTheSource) return view(error.identity.root);
        throw error;
      }
    },

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

    lookNow: async ({ root }) => {
      if (root) repository(root);
      const looks = await agent.lookNow(root);
      return { ...status(), looks: looks.map(({ watched, look }) => lookView(watched.identity.root, look)) };
    },

    repositoryDetail: async ({ root }) => repositoryDetail(agent, root),

    flowFiles: async ({ root, flowPath }) => flowFiles(agent, root, flowPath),

    activity: async () => ({ entries: activity.list() }),

    conflicts: async ({ root }) => {
      const { identity, engine } = repository(root);
      return {
        root: identity.root,
        conflicts: agent.conflicts(identity.root).map(withDisk),
        heldDeletions: engine.status().heldDeletions,
        newer: engine.service.newer().map(withDisk),
      };
    },

    takeNewer: async ({ root, confirmed, files }) => {
      const watched = sending(root);
      const result = await watched.engine.service.takeNewer({
        ...(confirmed !== undefined && { confirmed }),
        ...(files !== undefined && { seen: files }),
      });
      takenEntries(watched, result.taken);
      return result;
    },

    resolveConflicts: async ({ root, side, files }) => {
      const watched = sending(root);
      const settled = await watched.engine.service.resolve(files ?? null, side);
      const kept = keptViews(settled.kept);
      settledEntries(
        watched,
        settled.resolved,
        kept,
        side === 'mine' ? "yours is sent on top of the service's" : "the service's version is on disk",
      );
      return { ...settled, kept };
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
      const [versions, { purges, capped }] = await Promise.all([
        engine.service.history(flowPath, path),
        engine.service.historyNotes(flowPath, path),
      ]);
      return {
        flowPath,
        path,
        capped,
        versions: versions.map((v) => ({
          version: v.version,
          hash: v.hash,
          size: v.size,
          writtenAt: v.written_at,
          // Who wrote it by the one display rule: the member from the credential, then the client's label.
          writtenBy: whoWrote(v.member, v.written_by),
          current: v.current,
          conflictCopy: v.conflict_copy === true,
        })),
        purges: purges.map(purgeView),
      };
    },

    purgeHistory: async ({ root, file, version }) => {
      const { engine } = repository(root);
      await keepsHistory();
      const { flowPath, path } = located(engine, file);
      try {
        return {
          flowPath,
          path,
          purge: purgeView(await engine.service.purgeHistory(flowPath, path, version)),
        };
      } catch (error) {
        // A service that keeps history but has no purge (an older flowsync serve): its 404, in words.
        if (reasonOf(error) === 'unknown_function')
          throw new AgentApiError(
            'refused',
            `${agent.serviceUrl} cannot purge history (it has no purge_history, an extension of a newer \`flowsync serve\`): nothing was removed; upgrade the service, or its operator removes the versions there.`,
          );
        throw error;
      }
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
      const { deleted, outcome, service, kept } = await engine.service.restoreVersion(
        flowPath,
        path,
        version,
      );
      return {
        flowPath,
        path,
        version,
        deleted,
        outcome,
        serviceWrittenBy: service?.writtenBy ?? null,
        kept: kept === null ? null : keptWhere(kept),
      };
    },

    heldGitChanges: async ({ root }) => {
      const { engine } = repository(root);
      return { sets: engine.motions.heldSets(), teammates: engine.motions.teammates };
    },

    settleGitChanges: async ({ root, choice, name }) => {
      const watched = choice === 'send' ? sending(root) : repository(root);
      const { engine } = watched;
      const sets =
        choice === 'send' ? await engine.sendGitChanges(name ?? null) : engine.keepGitChanges(name ?? null);
      for (const set of sets)
        activity.record(watched, {
          kind: 'settled',
          flowPath: null,
          path: null,
          message: `${changeSetWords(set)} ${choice === 'send' ? 'sent to the team' : 'kept here, not sent'}, on your word`,
        });
      return {
        sets: sets.map(({ name, changed, deleted }) => ({ name, changed, deleted })),
        teammates: engine.motions.teammates,
      };
    },

    settleDeletions: async ({ root, choice }) => {
      if (choice === 'restore') {
        const watched = repository(root);
        const back = await watched.engine.service.restoreDeleted();
        const kept = keptViews(back.kept);
        activity.record(watched, {
          kind: 'settled',
          flowPath: null,
          path: null,
          message: `${plural(back.restored, 'file')} whose deletion was held put back on disk from the service's copy`,
        });
        settledEntries(watched, [], kept, '');
        return { deleted: 0, ...back, kept };
      }
      const watched = sending(root);
      const deleted = await watched.engine.sendHeldDeletions();
      activity.record(watched, {
        kind: 'settled',
        flowPath: null,
        path: null,
        message: `${plural(deleted, 'held deletion')} sent to the service, on your word`,
      });
      return { deleted, restored: 0, notWritten: [], kept: [] };
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

    settleNotInCheckout: async ({ root, choice, files, confirmed }) => {
      const watched = choice === 'restore' ? repository(root) : sending(root);
      const { engine } = watched;
      await listsItsFiles();
      if (choice === 'restore') {
        const written = await engine.service.restoreNotInCheckout(files);
        activity.record(watched, {
          kind: 'settled',
          flowPath: null,
          path: null,
          message: `${plural(written.restored, 'file')} on the service not in this checkout written to disk from the service's copy`,
        });
        return { deleted: 0, ...written };
      }
      if (files === undefined)
        throw new AgentApiError(
          'invalid_input',
          'Name the files to delete on the service, as they were listed (`notInCheckout`): nothing is deleted unseen.',
        );
      // The deletions go by the held-deletion guard's allowance, which would send the held ones along.
      const held = engine.status().heldDeletions;
      if (held > 0)
        throw new AgentApiError(
          'refused',
          `${held} deletions are held in ${root}: settle them first (Delete them on the service, or Restore them on disk), then these.`,
        );
      let deleted: number;
      try {
        deleted = await engine.service.deleteNotInCheckout(files, confirmed === true);
      } catch (error) {
        if (error instanceof DeletionsNotConfirmed) throw new AgentApiError('refused', error.message);
        throw error;
      }
      const named = files.length <= 20 ? `: ${files.map((f) => `${f.flowPath}/${f.path}`).join(', ')}` : '';
      activity.record(watched, {
        kind: 'settled',
        flowPath: null,
        path: null,
        message: `${plural(deleted, 'file')} not in this checkout deleted on the service, on your word${named}`,
      });
      return { deleted, restored: 0, skipped: [] };
    },

    myTasks: async ({ after }) => agent.team.myTasks(await apiKey(), after),

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

    workflowStates: async ({ taskKey, teamId }) => {
      // The first name with states answers; with none, the last one read (the key the user knows, ENG).
      const teams = workflowStateTeams({ task_key: taskKey, team_id: teamId });
      let found: WorkflowStateCacheValue = { team_id: teamId ?? taskKey, states: [], updated_at: null };
      for (const team of teams) {
        found = await agent.client.tracker.workflowStateCacheGetByTeam({ team_id: team });
        if (found.states.length > 0) break;
      }
      return found;
    },

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
      const keptAs = repoConfig(root).takeService();
      return { ...repoConfigView(root), keptAs };
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
        const claim = await claimKey(agent.client, secret, await gitEmails(agent.roots()));
        // Unknown to the service, and this agent may not register it: no use keeping it. A key that is nobody's
        // but that an operator may register (Settings lists whom) is kept for the user to say who they are.
        if (claim.outcome === 'unclaimed' && unusable(claim))
          throw new AgentApiError('refused', unclaimedLine(claim, agent.serviceUrl));
      } catch (error) {
        // Not usable after all: do not leave a key in the keychain that the service refuses.
        await agent.secrets
          .delete(agent.secretsUrl, 'api-key')
          .catch(logUnexpected('removing a tracker API key the service refused'));
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
      return keyOwnerView(agent.client, secret, agent.serviceUrl, agent.roots());
    },

    whoYouAre: async () => {
      const { secret } = await agent.secrets.locate(agent.secretsUrl, 'api-key');
      return secret === null ? null : keyOwnerView(agent.client, secret, agent.serviceUrl, agent.roots());
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

/** A purge's tombstone in the window's words. */
function purgeView(purge: HistoryPurge) {
  return {
    version: purge.version,
    versions: purge.versions,
    purgedAt: purge.purged_at,
    purgedBy:
      purge.purged_by_member === undefined
        ? purge.purged_by
        : whoWrote(purge.purged_by_member, purge.purged_by),
  };
}

/** A difference as the window shows it: what is on disk now (null: nothing) is always said, never left out. */
function withDisk<T extends { diskHash?: string | null }>(file: T): T & { diskHash: string | null } {
  return { ...file, diskHash: file.diskHash ?? null };
}

/** A take of more files than this is one entry with the counts (the CLI lists every file). */
const TAKEN_NAMED = 5;
