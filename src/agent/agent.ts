import { EventEmitter } from 'node:events';
import { existsSync } from 'node:fs';
import { basename } from 'node:path';
import type { RemoteClient } from '../client/index.ts';
import { logUnexpected } from '../host/index.ts';
import type { RunningService } from '../service/index.ts';
import type { SecretStore } from '../secrets/index.ts';
import {
  SyncEngine,
  RepoConfigBase,
  gitChangesLine,
  type FileConflict,
  type FileState,
  type FreshLook,
  type Hasher,
  type SyncState,
  type SyncProgress,
  type SyncReport,
  type SyncStatus,
} from '../sync/index.ts';
import { repositoryConfigSchema, saveConfig, type AgentConfig, type RepositoryConfig } from './config.ts';
import type { TokensNotice } from './embedded-service.ts';
import { RepoConfigFilePublisher } from './repo-config-file.ts';
import { openAgentParts, type AgentOptions, type AgentParts } from './agent-parts.ts';
import { ServiceInfo } from './service-info.ts';
import { TeamCalls } from './team-calls.ts';
import { LiveFeed } from './live-feed.ts';
import { describeEntry, type RepositoryDescription } from './describe.ts';
import { RepositoryTable, type RepositoryEntry, type WatchedRepository } from './repository-table.ts';
import { checkoutWriter, writerName } from './writer.ts';
import { checkFlowRoots, folderNotThere } from './folder-check.ts';
import { NotTheSource, notTheSource, tilde } from './source.ts';
import { AgentApiError } from './api-error.ts';
import { BranchFollower, type BranchSwitch } from './branch-follower.ts';
import { gitPort } from './git-trail.ts';
import { pendingRename, renameTo, type PendingRename } from './rename.ts';
import {
  configuredRepository,
  folderKey,
  identifyRepository,
  pauseOf,
  sameFolder,
  withPausedRepository,
  withRepository,
  type RepositoryIdentity,
} from './repositories.ts';

/**
 * How often the folders of absent repositories are looked for: as often as a running engine looks for a folder
 * that vanished (`presenceIntervalMs`, 1 s), so a drive mounted is synced as soon whichever side of the start it
 * was unmounted on. One stat per absent folder (microseconds; an empty mount point adds one readdir of nothing).
 */
const ABSENT_CHECK_MS = 1000;

interface AgentEvents {
  status: [WatchedRepository, SyncStatus];
  /** A repository whose folder was not there is now, and synced: its first round is done. */
  found: [WatchedRepository];
  progress: [WatchedRepository, SyncProgress];
  synced: [WatchedRepository, SyncReport];
  /** HEAD moved between two rounds: the round that followed, summed up. */
  branch: [WatchedRepository, BranchSwitch];
  /** Git's change sets held for their user changed: the line that says them, once the engine rests. */
  gitChanges: [WatchedRepository, string];
  /** A rescan found that the repository's name changed (its origin renamed): the line that says what to do. */
  renamed: [WatchedRepository, string];
  /** Its `.flowsync/repo-config.json` became invalid (the words that say why), or valid again (null). */
  'repo-config': [WatchedRepository, string | null];
  /** Its `.flowsync/repo-config.json` was refused for a teammate's newer config: the line that says so. */
  repoConfig: [WatchedRepository, string];
}

/**
 * The composition root: config, secrets, the service (embedded or remote), one client, one state file, one
 * hasher pool, and a sync engine per repository.
 */
export class Agent extends EventEmitter<AgentEvents> {
  /** Every repository the agent knows, running, unwatched (no engine) or absent: one entry each. */
  private readonly table = new RepositoryTable();
  private absentTimer: NodeJS.Timeout | null = null;
  /** The look for absent folders under way, if any: one at a time, and waited for by close(). */
  private looking: Promise<void> | null = null;
  private closing = false;
  /** Whether close() began: work nobody awaits that fails from now on has nobody left to tell. */
  get stopping(): boolean {
    return this.closing;
  }
  private watching = false;
  private configTimer: NodeJS.Timeout | null = null;
  /** The long call that tells a teammate's writes at once (a service with `live_changes`); null before or without. */
  private live: LiveFeed | null = null;
  private liveTimer: NodeJS.Timeout | null = null;
  /** What the service does beyond the spec (history, bases). */
  readonly serviceInfo: ServiceInfo;
  /** The team's service and the keychain as commands (tasks, the tracker, secrets): the window asks through these. */
  readonly team = new TeamCalls(this);
  readonly serviceUrl: string;
  private readonly serviceKey: string;
  /** The address the service's secrets are filed under in the keychain. */
  readonly secretsUrl: string;
  /**
   * What chose the service: `--url`, FLOWSYNC_URL, the config file, or none (the embedded one). The window says
   * it: its Service URL field is the config file's, and showed empty while FLOWSYNC_URL was in force.
   */
  get serviceUrlFrom(): 'command line' | 'environment' | 'config file' | 'embedded' {
    if (this.embedded) return 'embedded';
    if (this.options.serviceUrl) return 'command line';
    return process.env.FLOWSYNC_URL ? 'environment' : 'config file';
  }
  /** Set when the service runs inside this process. */
  readonly embedded: RunningService | null;
  /** Where the embedded service's tokens are, to show once; null otherwise. */
  readonly notice: TokensNotice | null;
  readonly client: RemoteClient;
  private readonly state: SyncState;
  readonly secrets: SecretStore;
  private readonly hasher: Hasher;
  private readonly options: AgentOptions & { config: AgentConfig };

  private constructor(parts: AgentParts) {
    super();
    ({
      serviceUrl: this.serviceUrl,
      serviceKey: this.serviceKey,
      secretsUrl: this.secretsUrl,
      embedded: this.embedded,
      notice: this.notice,
      client: this.client,
      state: this.state,
      secrets: this.secrets,
      hasher: this.hasher,
      options: this.options,
    } = parts);
    this.serviceInfo = new ServiceInfo(this.client, this.serviceUrl);
  }

  /** The state's id for a repository with this service, running or paused; null when it never synced. */
  private stateIdOf(root: string): number | null {
    const running = this.table.running(root);
    if (running) return running.watched.engine.repoId;
    return (
      this.state.repos().find((repo) => repo.root === root && repo.service === this.serviceKey)?.id ?? null
    );
  }

  /** The repositories being synced, in the order they were added. */
  watched(): WatchedRepository[] {
    return this.table.watched();
  }

  /** One repository being synced: by its root, or the first one; null when there is none. */
  find(root?: string): WatchedRepository | null {
    return (root ? this.table.running(root)?.watched : this.table.watched()[0]) ?? null;
  }

  /** A running repository's config: its file, the base it was last synced on, and a conflict standing. */
  repoConfigOf(root: string): RepoConfigFilePublisher | null {
    return this.table.running(root)?.configFile ?? null;
  }

  /** Every repository the agent knows, synced, paused or missing, by root, sorted. */
  roots(): string[] {
    return this.table.roots();
  }

  /** The repositories whose folder is not there (missing), by root, sorted. */
  missing(): string[] {
    return this.table
      .all()
      .flatMap((entry) => (entry.kind === 'absent' ? [entry.root] : []))
      .sort();
  }

  /** Whether a folder is one of the agent's repositories, synced, paused or missing. */
  knows(root: string): boolean {
    return this.table.get(root) !== undefined;
  }

  /** What is known of a repository, running or paused; null for a folder the agent does not sync. */
  describe(root: string): RepositoryDescription | null {
    const entry = this.table.get(root);
    if (!entry) return null;
    return describeEntry(entry, { state: this.state, repoId: this.stateIdOf(root), config: this.config });
  }

  /** Whether a branch switch of a repository is being summed up (its rounds are not said one by one). */
  switchingBranch(root: string): boolean {
    return this.table.running(root)?.branch.switching ?? false;
  }

  /**
   * The files of a repository, or of one of its flows, each with whether it is pending (the state's one rule).
   * Reads every file record asked for: 200 ms at 100,000 files on the 2-core build machine.
   */
  files(root: string, flowPath: string | null = null): FileState[] {
    const repoId = this.stateIdOf(root);
    return repoId === null ? [] : this.state.fileStates(repoId, flowPath);
  }

  /** Files in conflict with the service's version, waiting for their user. */
  conflicts(root: string): FileConflict[] {
    const repoId = this.stateIdOf(root);
    return repoId === null ? [] : this.state.conflicts(repoId);
  }

  /** Files on disk that are not sent (binary, too large, a link...), with the reason's code (FILE_WARNINGS). */
  notSent(root: string): { flowPath: string; path: string; warning: string }[] {
    const repoId = this.stateIdOf(root);
    return repoId === null ? [] : this.state.warnings(repoId);
  }

  /** A round now, of one repository or of all, even while backing off. */
  async syncNow(root?: string): Promise<void> {
    const targets = root ? [this.table.running(root)?.watched] : this.table.watched();
    await Promise.all(targets.map((watched) => watched?.engine.syncAndCheck()));
  }

  /**
   * A fresh look at the service (engine.lookNow: the quick check, unless the last look is fresh), of one running
   * repository or of all, at once; each waits at most `waitMs` (default 5 s).
   */
  async lookNow(
    root?: string,
    options: { waitMs?: number } = {},
  ): Promise<{ watched: WatchedRepository; look: FreshLook }[]> {
    const targets = root ? [this.table.running(root)?.watched] : this.table.watched();
    const running = targets.filter((watched) => watched !== undefined);
    return Promise.all(
      running.map(async (watched) => ({ watched, look: await watched.engine.lookNow(options) })),
    );
  }

  get config(): AgentConfig {
    return this.options.config;
  }

  /** Replaces the config and, unless told otherwise (tests, `flowsync sync`), saves it. */
  updateConfig(config: AgentConfig): void {
    this.options.config = config;
    if (this.options.persistConfig) saveConfig(config);
  }

  static async open(options: AgentOptions = {}): Promise<Agent> {
    return new Agent(await openAgentParts(options));
  }

  /**
   * Registers a repository and returns its engine (not started). One checkout per repository and service is its
   * source: another one (a worktree, a second clone, a copy) is refused with a line that names the source, unless
   * `source` says to sync from this one instead (the other then stops).
   */
  async addRepository(
    folder: string,
    configured?: RepositoryConfig,
    options: { source?: boolean; replace?: WatchedRepository } = {},
  ): Promise<WatchedRepository> {
    const { identity, renamed } = await this.identify(folder, configured);
    const existing = this.table.running(identity.root)?.watched;
    if (existing && existing !== options.replace) return existing;
    this.table.update(identity.root, (entry) => entry && { ...entry, rename: renamed ?? undefined });
    await this.checkSource(identity, options.source === true);
    const pause = pauseOf(configured);
    const engine = new SyncEngine({
      repo: {
        ...identity,
        flowRoots: configured?.flowRoots ?? ['flows'],
        writer: checkoutWriter(
          writerName(identity.root),
          this.state.checkoutId(
            this.state.ensureRepo(identity.root, this.serviceKey, identity.owner, identity.name),
          ),
        ),
        member: () => this.serviceInfo.member(), // whoami, asked once: own versions, read-only
        ...(configured?.holdDeletions !== undefined && {
          deletionGuard: configured.holdDeletions === false ? null : configured.holdDeletions,
        }),
        ...(configured?.gitChanges !== undefined && { gitChanges: configured.gitChanges }),
      },
      git: gitPort(identity.root, configured?.flowRoots ?? ['flows']),
      client: this.client,
      state: this.state,
      hasher: this.hasher,
      serviceKey: this.serviceKey,
      rescanIntervalMs: rescanIntervalFromEnv(),
      serviceCheckIntervalMs: intervalFromEnv('FLOWSYNC_SERVICE_CHECK_MS'),
      live: () => this.live?.live ?? false,
      // Paused by its user before: watched and counted from the start, nothing sent until resumed.
      ...(pause && { paused: pause }),
      ...this.options.timings,
    });
    const watched = { identity, engine };
    const branch = new BranchFollower(identity.root);
    // Git's change sets held, said once each time they change and the engine rests (not at each of its rounds).
    let saidGitChanges = '';
    engine.on('status', (status) => {
      if (status.phase === 'idle') {
        const sets = status.gitChanges;
        const now = sets.map((set) => `${set.name}\0${set.changed}\0${set.deleted}`).join('\n');
        if (now !== saidGitChanges && sets.length > 0)
          for (const set of sets)
            this.emit('gitChanges', watched, gitChangesLine(set, engine.motions.teammates));
        saidGitChanges = now;
      }
      if (status.phase !== 'scanning' && status.phase !== 'syncing') this.showProgress(watched, null);
      if (status.phase === 'syncing') branch.round(null);
      const switched = status.phase === 'idle' ? branch.rested(status.heldDeletions) : null;
      if (switched) this.emit('branch', watched, switched);
      this.emit('status', watched, status);
    });
    engine.on('progress', (progress) => {
      // Finished work shows no bar: a rescan's last step can come after the status it ends in (offline, during an
      // outage), and its "Hashing files" bar then stayed for the whole outage.
      this.showProgress(watched, progress.done >= progress.total ? null : progress);
      this.emit('progress', watched, progress);
    });
    engine.on('synced', (report) => {
      branch.round(report);
      this.emit('synced', watched, report);
    });
    // A folder gone meanwhile is the engine's `missing`, said there; its name is looked at again at the next rescan.
    engine.on('rescanned', () => void this.recheckName(watched).catch(nameUnreadable));
    this.table.update(identity.root, () => ({
      kind: 'running',
      watched,
      configFile: new RepoConfigFilePublisher(
        identity.root,
        identity.owner,
        identity.name,
        this.client,
        new RepoConfigBase(this.state.db, engine.repoId),
        async () => (await this.serviceInfo.capabilities())?.repo_config_bases ?? null,
        (line) => this.emit('repoConfig', watched, line),
      ),
      branch,
      progress: null,
      rename: renamed ?? undefined,
    }));
    return watched;
  }

  /** The progress of a running engine's long work, kept for describe(); null: none. */
  private showProgress(watched: WatchedRepository, progress: SyncProgress | null): void {
    this.table.update(watched.identity.root, (entry) =>
      entry?.kind === 'running' && entry.watched === watched ? { ...entry, progress } : entry,
    );
  }

  /**
   * Who a folder is to this service: the name it synced under (the state's, for this checkout and service), and
   * the rename waiting when its name now differs. A first sync takes the name it has now.
   */
  private async identify(
    folder: string,
    configured?: RepositoryConfig,
  ): Promise<{ identity: RepositoryIdentity; renamed: PendingRename | null }> {
    const now = await identifyRepository(folder, configured);
    const synced = this.state
      .repos()
      .find((repo) => repo.root === now.root && repo.service === this.serviceKey);
    const identity = { root: now.root, owner: synced?.owner ?? now.owner, name: synced?.name ?? now.name };
    return { identity, renamed: synced ? renameTo(identity, now) : null };
  }

  /** At a periodic rescan: the name looked at again (a remote renamed while running), said once when it changed. */
  private async recheckName(watched: WatchedRepository): Promise<void> {
    const { root } = watched.identity;
    if (!this.table.isRunning(watched)) return;
    const renamed = await pendingRename(watched.identity, configuredRepository(this.config, root));
    if (!this.table.isRunning(watched)) return; // stopped, renamed or removed meanwhile
    if (renamed?.message === this.table.get(root)?.rename?.message) return;
    this.table.update(root, (entry) => entry && { ...entry, rename: renamed ?? undefined });
    if (renamed) this.emit('renamed', watched, renamed.message);
    this.emit('status', watched, watched.engine.status());
  }

  /**
   * Syncs a checkout whose name changed under its new name (`flowsync start <folder> --rename`, the window's
   * button), before it is (re)started: what it synced under the old name is forgotten, so a fresh state for the
   * new name learns the service's files first and sends what the new name lacks, by the usual rules (conflicts,
   * held deletions). The old name's files stay on the service, and its history keeps them. Another checkout
   * synced under the new name is its source, unless `source` takes it over. A name that did not change is refused.
   */
  async rename(
    folder: string,
    options: { source?: boolean } = {},
  ): Promise<{ from: RepositoryIdentity; to: RepositoryIdentity }> {
    const { identity, renamed } = await this.identify(folder, configuredRepository(this.config, folder));
    const { root } = identity;
    if (!renamed)
      throw new AgentApiError(
        'invalid_input',
        `${tilde(root)} syncs as ${identity.owner}/${identity.name}, its name now: nothing to rename.`,
      );
    const { to } = renamed;
    const source = this.state.sourceOf(this.serviceKey, to.owner, to.name);
    if (source !== null && source !== root && !options.source)
      throw new AgentApiError(
        'invalid_input',
        `${to.owner}/${to.name} is synced from ${tilde(source)}: \`flowsync start ${tilde(root)} --rename ` +
          '--source` syncs it from this checkout instead.',
      );
    await this.table.running(root)?.watched.engine.stop();
    this.table.update(root, () => undefined);
    this.state.forgetRepo(root, this.serviceKey);
    await this.checkSource(to, options.source === true);
    return { from: identity, to };
  }

  /**
   * Whether this checkout may sync its repository with this service: it is the source, or there is none yet (it
   * becomes it), or `take` makes it the source (the one before stops). Otherwise NotTheSource.
   */
  private async checkSource(identity: RepositoryIdentity, take: boolean): Promise<void> {
    const source = this.state.sourceOf(this.serviceKey, identity.owner, identity.name);
    if (source !== null && source !== identity.root) {
      if (!take) throw await notTheSource(identity, source);
      await this.standDown(source, identity.root);
    }
    this.state.claimSource(this.serviceKey, identity.owner, identity.name, identity.root);
  }

  /**
   * Makes this folder its repository's source with this service, before anything is started (`flowsync start
   * <folder> --source`): the checkout synced before is then not synced, and says so.
   */
  async makeSource(folder: string): Promise<void> {
    const { identity } = await this.identify(folder, configuredRepository(this.config, folder));
    await this.checkSource(identity, true);
  }

  /** A checkout that is no longer its repository's source stops, and says why (its config entry stays). */
  private async standDown(root: string, newSource: string): Promise<void> {
    const watched = this.table.running(root)?.watched;
    if (!watched) return;
    await watched.engine.stop();
    const { identity } = watched;
    const reason = (await notTheSource(identity, newSource)).message;
    this.table.update(root, () => ({
      kind: 'unwatched',
      ...identity,
      flowRoots: [...watched.engine.flowRoots],
      reason,
      syncedFrom: newSource,
    }));
    this.emit('status', watched, watched.engine.status());
  }

  /**
   * Every enabled repository of the config. One that another checkout is the source of is listed, not synced,
   * with the line that says so; the others start as usual.
   */
  async addConfigured(): Promise<void> {
    for (const repo of this.config.repositories) {
      if (repo.enabled) {
        // Not there (a drive not mounted): missing, and looked for while the agent watches (lookForAbsent).
        if (folderNotThere(repo.path)) this.markAbsent(repo, null);
        else await this.addOrList(repo);
      } else if (existsSync(repo.path)) {
        // Paused: its engine watches and counts what changes (pending), and sends nothing until resumed.
        await this.addOrList(repo);
      } else {
        // Paused and not there: listed as paused under the name it last synced as (it was in no list at all, and
        // `resume --all` failed on it); resuming it looks for its folder.
        this.markAbsent(repo, null);
        this.table.update(folderKey(repo.path), unwatchedWhenAbsent);
      }
    }
  }

  /** Registers a repository of the config; one that another checkout is the source of is listed, not synced. */
  private async addOrList(
    repo: RepositoryConfig,
    replace?: WatchedRepository,
  ): Promise<WatchedRepository | null> {
    try {
      return await this.addRepository(repo.path, repo, { replace });
    } catch (error) {
      // The stopped engine it would have replaced is listed no longer.
      if (replace && this.table.isRunning(replace)) this.table.update(replace.identity.root, () => undefined);
      if (!(error instanceof NotTheSource)) throw error;
      this.table.update(error.identity.root, () => ({
        kind: 'unwatched',
        ...error.identity,
        flowRoots: repo.flowRoots,
        reason: error.message,
        syncedFrom: error.source,
      }));
      return null;
    }
  }

  /** A repository of the config whose folder is not there: missing, under the name it was last synced as. */
  private markAbsent(repo: RepositoryConfig, problem: string | null): void {
    const root = folderKey(repo.path);
    const stored = this.state.repos().find((r) => r.root === root && r.service === this.serviceKey);
    this.table.update(root, () => ({
      kind: 'absent',
      root,
      owner: repo.owner ?? stored?.owner ?? '?',
      name: repo.name ?? stored?.name ?? basename(root),
      flowRoots: repo.flowRoots,
      configured: repo,
      problem,
    }));
  }

  /**
   * The absent repositories whose folder is there now are synced as any repository at start: identified by their
   * git remote (or the config), checked as the source, and sent through the usual rules (deletions held,
   * conflicts found). One whose folder is there but cannot be synced yet stays missing, saying why.
   */
  private lookForAbsent(): Promise<void> {
    this.looking ??= (async () => {
      for (const absent of this.table.all()) {
        if (this.closing) return;
        if (absent.kind !== 'absent' || folderNotThere(absent.configured.path)) continue;
        const { root } = absent;
        this.table.update(root, () => undefined);
        let watched: WatchedRepository | null = null;
        try {
          watched = await this.addOrList(absent.configured);
          if (!watched) continue;
          await watched.engine.initialSync({ watchFirst: true });
          // Stopping meanwhile: close() stops this engine too; nothing more is started.
          if (this.closing) return;
          await watched.engine.watch();
        } catch (error) {
          if (this.closing) return; // close() stops its engine
          if (watched) {
            await watched.engine.stop();
            this.table.update(watched.identity.root, () => undefined);
          }
          this.markAbsent(
            absent.configured,
            `${root} is there but cannot be synced yet (${(error as Error).message}); trying again`,
          );
          continue;
        }
        this.emit('found', watched);
      }
    })().finally(() => (this.looking = null));
    return this.looking;
  }

  /**
   * Adds a folder while running: saved in the config, synced, and watched if the agent is watching. `source`:
   * sync its repository from this checkout, instead of the one it is synced from now. `rename`: sync it under the
   * name it has now (see rename).
   */
  async addAndStart(
    folder: string,
    options: { source?: boolean; rename?: boolean } = {},
  ): Promise<WatchedRepository> {
    if (options.rename) await this.rename(folder, options);
    // Already synced and watched (handed over twice, added twice from the window): a second watch would double it.
    const known = this.table.watched().find(({ identity }) => sameFolder(identity.root, folder));
    if (known) return known;
    let watched: WatchedRepository;
    try {
      watched = await this.addRepository(folder, configuredRepository(this.config, folder), options);
    } catch (error) {
      // Another checkout is its source (a worktree, a second clone): kept and listed, as at start, so that the
      // window's card offers to sync from it instead; the error still says why to the caller.
      if (error instanceof NotTheSource) {
        this.updateConfig(withRepository(this.config, error.identity.root));
        await this.addOrList(configuredRepository(this.config, error.identity.root)!);
      }
      throw error;
    }
    this.updateConfig(withRepository(this.config, watched.identity.root));
    await watched.engine.initialSync({ watchFirst: this.watching });
    if (this.watching) await watched.engine.watch();
    return watched;
  }

  /**
   * A repository's flow roots, owner and name, as its user sets them (the window's Settings): the roots checked
   * (checkFlowRoots), saved in the config, and its engine restarted with them, so that a `pipelines/` set for a
   * folder without `flows/` is synced at once. Owner and name null: read from its origin (else `local/<folder>`);
   * a name other than the one it synced under waits for its user as any rename does (see rename).
   */
  async setRepositorySettings(
    root: string,
    settings: { flowRoots: readonly string[]; owner: string | null; name: string | null },
  ): Promise<void> {
    if (!this.knows(root))
      throw new AgentApiError('not_found', `${root} is not a repository flowsync syncs.`);
    const flowRoots = checkFlowRoots(root, settings.flowRoots);
    const entry = configuredRepository(this.config, root);
    const { owner: _owner, name: _name, ...rest } = entry ?? { path: root };
    const configured = repositoryConfigSchema.parse({
      ...rest,
      flowRoots,
      ...(settings.owner !== null && { owner: settings.owner }),
      ...(settings.name !== null && { name: settings.name }),
    });
    const { repositories } = this.config;
    this.updateConfig({
      ...this.config,
      repositories: entry
        ? repositories.map((repository) => (repository === entry ? configured : repository))
        : [...repositories, configured],
    });
    const known = this.table.get(root);
    if (known?.kind === 'absent') return this.markAbsent(configured, known.problem);
    if (known?.kind === 'unwatched') return this.table.update(root, () => ({ ...known, flowRoots }));
    if (known?.kind !== 'running') return;
    const { watched } = known;
    await watched.engine.stop();
    // Listed (stopped) until its successor is: a window's card and this form stay where they are meanwhile.
    let restarted: WatchedRepository | null;
    try {
      restarted = await this.addOrList(configured, watched);
    } catch (error) {
      // Its folder went meanwhile, or cannot be read: kept as missing, looked for again as any absent folder.
      this.markAbsent(configured, `${root} cannot be synced yet (${(error as Error).message}); trying again`);
      throw error;
    }
    if (!restarted) return;
    await restarted.engine.initialSync({ watchFirst: this.watching });
    if (this.watching) await restarted.engine.watch();
    this.emit('status', restarted, restarted.engine.status());
  }

  /** Stops syncing a repository and forgets it in the config; the service keeps what it has. */
  async remove(root: string): Promise<boolean> {
    const known = this.table.get(root);
    if (known?.kind === 'running') await known.watched.engine.stop();
    this.state.releaseSource(this.serviceKey, root);
    this.table.update(root, () => undefined);
    this.updateConfig({
      ...this.config,
      repositories: this.config.repositories.filter((r) => !sameFolder(r.path, root)),
    });
    return known !== undefined;
  }

  /**
   * Pauses a repository: nothing is sent until resumed, and what changes meanwhile is watched and counted as
   * pending (its engine keeps running, see SyncEngine.pause). Remembered in the config (`enabled: false`, `pausedAt`).
   */
  async pause(root: string): Promise<void> {
    const since = new Date().toISOString();
    const known = this.table.get(root);
    if (known?.kind === 'absent') {
      this.table.update(root, unwatchedWhenAbsent);
      this.setEnabled(root, false, since);
      return;
    }
    const watched = known?.kind === 'running' ? known.watched : null;
    if (!watched || watched.engine.isPaused) return;
    this.setEnabled(root, false, since);
    watched.engine.pause(since);
  }

  /** Resumes a paused repository: what waited is sent at once. */
  async resume(root: string): Promise<WatchedRepository | null> {
    const known = this.table.get(root);
    const running = known?.kind === 'running' ? known.watched : null;
    if (running) {
      if (!running.engine.isPaused) return running;
      this.setEnabled(root, true);
      // Its name is looked at again, as at a start (a remote renamed while paused).
      await this.recheckName(running).catch(nameUnreadable);
      await running.engine.resume();
      return running;
    }
    if (known?.kind !== 'unwatched') return null;
    this.setEnabled(root, true);
    const configured = configuredRepository(this.config, root);
    if (configured && folderNotThere(root)) {
      this.markAbsent(configured, null);
      return null;
    }
    const watched = await this.addRepository(root, configured);
    await watched.engine.initialSync({ watchFirst: this.watching });
    if (this.watching) await watched.engine.watch();
    return watched;
  }

  private setEnabled(root: string, enabled: boolean, since?: string): void {
    this.updateConfig(
      withPausedRepository(this.config, root, enabled ? null : { since: since ?? new Date().toISOString() }),
    );
  }

  /** The first scan and upload of every repository; `watchFirst` when `watchAll` follows (see SyncEngine). */
  async syncAll({ watchFirst = false } = {}): Promise<void> {
    await Promise.all(this.table.watched().map(({ engine }) => engine.initialSync({ watchFirst })));
  }

  /** Then watch them all. */
  async watchAll(): Promise<void> {
    this.watching = true;
    const checkConfigFiles = async () => {
      // Paused: its `.flowsync/repo-config.json` waits too (the publisher sends it at the first check after resume).
      for (const entry of this.table.all()) {
        if (entry.kind !== 'running' || entry.watched.engine.isPaused) continue;
        const { watched, configFile } = entry;
        const before = configFile.problem;
        await configFile.check();
        // Said where the agent's lines are read, and pushed to the window (its card and badge), once per change.
        if (configFile.problem !== before) {
          this.emit('repo-config', watched, configFile.problem);
          this.emit('status', watched, watched.engine.status());
        }
      }
    };
    await checkConfigFiles();
    this.configTimer = setInterval(
      () => void checkConfigFiles().catch(logUnexpected('checking .flowsync/repo-config.json')),
      this.options.timings?.presenceIntervalMs ?? 1000,
    );
    this.configTimer.unref();
    this.absentTimer = setInterval(
      () => void this.lookForAbsent(),
      this.options.timings?.presenceIntervalMs ?? ABSENT_CHECK_MS,
    );
    this.absentTimer.unref();
    await Promise.all(this.table.watched().map(({ engine }) => engine.watch()));
    this.followTheService();
  }

  /**
   * Holds the live feed once the service says it has one (asked again every 30 s while it has not answered):
   * each running repository is told its flows written there, at once.
   */
  private followTheService(): void {
    // FLOWSYNC_LIVE=off keeps to the look every 45 s (a proxy in front that cuts long calls, or a test of the look).
    if (this.closing || this.live || process.env.FLOWSYNC_LIVE === 'off') return;
    void this.serviceInfo.capabilities().then((capabilities) => {
      if (this.closing || this.live) return;
      if (capabilities === null) {
        this.liveTimer = setTimeout(() => this.followTheService(), 30_000);
        this.liveTimer.unref();
        return;
      }
      if (capabilities.live_changes !== true) return;
      this.live = new LiveFeed(this.client, () =>
        this.table.watched().map(({ identity, engine }) => ({
          owner: identity.owner,
          name: identity.name,
          changed: (flows) =>
            void engine.serviceChanged(flows).catch(logUnexpected('looking at a teammate’s write')),
          unknown: () => void engine.serviceUnknown().catch(logUnexpected('looking at the service')),
        })),
      );
      this.live.start();
    });
  }

  async close(): Promise<void> {
    this.closing = true;
    if (this.configTimer) clearInterval(this.configTimer);
    if (this.liveTimer) clearTimeout(this.liveTimer);
    await this.live?.stop();
    if (this.absentTimer) clearInterval(this.absentTimer);
    const stopAll = (engines: WatchedRepository[]) => Promise.all(engines.map(({ engine }) => engine.stop()));
    const before = this.watched();
    // The engines first, so that a folder being taken up (a long first sync) ends at once; then one taken up
    // meanwhile.
    await stopAll(before);
    await this.looking;
    await stopAll(this.watched().filter((watched) => !before.includes(watched)));
    await this.hasher.close();
    await this.client.close();
    this.state.close();
    await this.embedded?.close();
  }
}

/** $FLOWSYNC_SERVICE_CHECK_MS (and the like): an engine's interval set by a test; unset or below 100 ms, the default. */
function intervalFromEnv(name: string): number | undefined {
  const value = Number(process.env[name]);
  return Number.isFinite(value) && value >= 100 ? value : undefined;
}

/** $FLOWSYNC_RESCAN_INTERVAL_MS: how often each repository is rescanned whole (tests set it small). */
function rescanIntervalFromEnv(): number | undefined {
  const value = Number(process.env.FLOWSYNC_RESCAN_INTERVAL_MS);
  return Number.isFinite(value) && value >= 100 ? value : undefined;
}

/**
 * A paused repository whose folder is not there is listed as paused (unwatched: no engine), not missing: resuming
 * looks for it.
 */
function unwatchedWhenAbsent(entry: RepositoryEntry | undefined): RepositoryEntry | undefined {
  if (entry?.kind !== 'absent') return entry;
  const { root, owner, name, flowRoots } = entry;
  return { kind: 'unwatched', root, owner, name, flowRoots: [...flowRoots] };
}

/**
 * A repository's name looked at again could not be read: its folder went or cannot be read meanwhile (a system
 * error: the engine says `missing`, or the next look tries again). Anything else is a bug, logged.
 */
// A function, not a call at load: `status` bundles this module's imports and must not load the log (pino) with it.
const nameUnreadable = (error: unknown) =>
  logUnexpected(
    'looking at the repository name again',
    (failed) => typeof (failed as { code?: unknown }).code === 'string',
  )(error);
