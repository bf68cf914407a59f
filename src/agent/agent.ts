import { EventEmitter } from 'node:events';
import { existsSync } from 'node:fs';
import { basename, dirname } from 'node:path';
import {
  MissingCredentialsError,
  createClient,
  serviceCapabilities,
  type ClientAuth,
  type RemoteClient,
} from '../client/index.ts';
import { ensurePrivateFolder } from '../host/index.ts';
import { type RunningService } from '../service/index.ts';
import {
  createSecretStore,
  normalizeServiceUrl,
  secretStoreAuth,
  type SecretStore,
} from '../secrets/index.ts';
import { folderGone, specAloneLine, type Capabilities } from '../protocol/index.ts';
import {
  Hasher,
  SyncEngine,
  type FileConflict,
  type FileState,
  type RepoCounts,
  type SyncState,
  type SyncEngineOptions,
  type SyncProgress,
  type SyncReport,
  type SyncStatus,
} from '../sync/index.ts';
import {
  DEFAULT_SERVICE_PORT,
  loadConfig,
  repositoryConfigSchema,
  saveConfig,
  type AgentConfig,
  type RepositoryConfig,
} from './config.ts';
import { startEmbeddedService, type TokensNotice } from './embedded-service.ts';
import { EMBEDDED_SERVICE, configuredServiceUrl } from './service-key.ts';
import { openState } from './open-state.ts';
import { defaultServiceDbPath, defaultStatePath } from '../host/index.ts';
import { RepoConfigFilePublisher } from './repo-config-file.ts';
import { writerName } from './writer.ts';
import { checkFlowRoots, folderNotThere } from './folder-check.ts';
import { currentBranch } from './git.ts';
import { NotTheSource, notTheSource, tilde } from './source.ts';
import { AgentApiError } from './api-error.ts';
import { BranchFollower, type BranchSwitch } from './branch-follower.ts';
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

export interface AgentOptions {
  config?: AgentConfig;
  statePath?: string;
  serviceDbPath?: string;
  secrets?: SecretStore;
  /** The embedded service's port (default 7420, or $FLOWSYNC_EMBEDDED_PORT; 0 = any free port). */
  embeddedPort?: number;
  /** Save config changes (added, paused, removed repositories) to the config file. */
  persistConfig?: boolean;
  /** The service to use; default $FLOWSYNC_URL, else the config's serviceUrl, else the embedded service. */
  serviceUrl?: string;
  /** Engine timings, for tests that cannot wait a minute for a back-off. */
  timings?: Pick<
    SyncEngineOptions,
    | 'quietMs'
    | 'maxWaitMs'
    | 'retryBaseMs'
    | 'retryMaxMs'
    | 'presenceIntervalMs'
    | 'rescanIntervalMs'
    | 'serviceCheckIntervalMs'
  >;
}

export interface WatchedRepository {
  identity: RepositoryIdentity;
  engine: SyncEngine;
}

/**
 * What a window or a command may know of one repository, running or paused: the read model, so that nothing
 * outside the agent reads its state file or its maps.
 */
export interface RepositoryDescription extends RepositoryIdentity {
  flowRoots: string[];
  /** The engine's status; null while not synced (another checkout is the source, or paused while not there). */
  status: SyncStatus | null;
  /** Whether its user paused it; since when (ISO), null when not paused or not known (paused by an older flowsync). */
  paused: boolean;
  pausedSince: string | null;
  counts: RepoCounts;
  /** The long work under way (hashing, uploading), if any. */
  progress: SyncProgress | null;
  lastSyncAt: string | null;
  /** Files on disk that are not sent, with the reason's code. */
  notSent: { flowPath: string; path: string; warning: string }[];
  /** What is wrong with the repository's `.flowsync/repo-config.json`, if anything. */
  configProblem: string | null;
  /** Flows the service refused as they are. */
  refused: { flowPath: string; message: string }[];
  /** Why a repository is not synced although enabled (another checkout is its source); null otherwise. */
  reason: string | null;
  /** The checkout its repository is synced from instead of this one; null when this one is (or none is). */
  syncedFrom: string | null;
  /** The branch the checkout is on (`main`, `detached at 1a2b3c4`); null outside a git repository. */
  branch: string | null;
  /** Its name changed (origin renamed) and waits for its user to sync under the new one; null otherwise. */
  rename: { to: string; message: string } | null;
}

const NO_COUNTS: RepoCounts = {
  flows: 0,
  files: 0,
  pending: 0,
  pendingFlows: 0,
  warnings: 0,
  rejected: 0,
  conflicts: 0,
  behind: 0,
};

/**
 * A repository of the config whose folder is not there (a drive not mounted, an empty mount point): `missing`,
 * nothing of it sent or deleted. Its owner/name are the config's, else the last ones the state knew, else not
 * known yet (`?`): an absent folder has no git remote to read, and is never taken for `local/<folder>`.
 */
interface AbsentRepository extends RepositoryIdentity {
  flowRoots: string[];
  configured: RepositoryConfig;
  /** Why it is not synced although its folder is there now (it cannot be read, its first sync failed); else null. */
  problem: string | null;
}

/**
 * How often the folders of absent repositories are looked for: as often as a running engine looks for a folder
 * that vanished (`presenceIntervalMs`, 1 s), so a drive mounted is synced as soon whichever side of the start it
 * was unmounted on. One stat per absent folder (microseconds; an empty mount point adds one readdir of nothing).
 */
const ABSENT_CHECK_MS = 1000;

/** What makes an agent: built by `Agent.open`. */
interface AgentParts {
  serviceUrl: string;
  serviceKey: string;
  /** The address the service's secrets are filed under in the keychain. */
  secretsUrl: string;
  /** Set when the service runs inside this process. */
  embedded: RunningService | null;
  /** Where the embedded service's tokens are, to show once; null otherwise. */
  notice: TokensNotice | null;
  client: RemoteClient;
  state: SyncState;
  secrets: SecretStore;
  hasher: Hasher;
  options: AgentOptions & { config: AgentConfig };
}

interface AgentEvents {
  status: [WatchedRepository, SyncStatus];
  /** A repository whose folder was not there is now, and synced: its first round is done. */
  found: [WatchedRepository];
  progress: [WatchedRepository, SyncProgress];
  synced: [WatchedRepository, SyncReport];
  /** HEAD moved between two rounds: the round that followed, summed up. */
  branch: [WatchedRepository, BranchSwitch];
  /** A rescan found that the repository's name changed (its origin renamed): the line that says what to do. */
  renamed: [WatchedRepository, string];
}

/**
 * The composition root: config, secrets, the service (embedded or remote), one client, one state file, one
 * hasher pool, and a sync engine per repository.
 */
export class Agent extends EventEmitter<AgentEvents> {
  private readonly repositories = new Map<string, WatchedRepository>();
  /**
   * Repositories of the config that have no engine: not synced because another checkout of the same repository is
   * its source (`reason` says which), or paused while their folder is not there, by root. A paused repository whose
   * folder is there has an engine (paused: it watches and counts, and sends nothing).
   */
  private readonly paused = new Map<
    string,
    RepositoryIdentity & { flowRoots: string[]; reason?: string; syncedFrom?: string }
  >();
  /** Enabled repositories of the config whose folder is not there, by folder: looked for while watching. */
  private readonly absent = new Map<string, AbsentRepository>();
  private absentTimer: NodeJS.Timeout | null = null;
  /** The look for absent folders under way, if any: one at a time, and waited for by close(). */
  private looking: Promise<void> | null = null;
  private closing = false;
  /** Repositories whose name changed since they synced, by root: synced under the old one until confirmed. */
  private readonly renames = new Map<string, PendingRename>();
  /** The branch of each repository being synced, from round to round. */
  private readonly branches = new Map<string, BranchFollower>();
  /** The last progress of each repository's long work, cleared when it finishes. */
  private readonly progress = new Map<string, SyncProgress>();
  /** Hand edits of each repository's `.flowsync/repo-config.json`, pushed to the service. */
  private readonly configFiles = new Map<string, RepoConfigFilePublisher>();
  private watching = false;
  private configTimer: NodeJS.Timeout | null = null;
  /** What the service does beyond the spec, once it answered (asked again while it has not). */
  private known: Capabilities | null = null;
  private asking: Promise<unknown> | null = null;

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
  }

  /** The state's id for a repository with this service, running or paused; null when it never synced. */
  private stateIdOf(root: string): number | null {
    const watched = this.repositories.get(root);
    if (watched) return watched.engine.repoId;
    return (
      this.state.repos().find((repo) => repo.root === root && repo.service === this.serviceKey)?.id ?? null
    );
  }

  /** The repositories being synced, in the order they were added. */
  watched(): WatchedRepository[] {
    return [...this.repositories.values()];
  }

  /** One repository being synced: by its root, or the first one; null when there is none. */
  find(root?: string): WatchedRepository | null {
    return (root ? this.repositories.get(root) : this.repositories.values().next().value) ?? null;
  }

  /** Every repository the agent knows, synced, paused or missing, by root, sorted. */
  roots(): string[] {
    return [...this.repositories.keys(), ...this.paused.keys(), ...this.absent.keys()].sort();
  }

  /** The repositories whose folder is not there (missing), by root, sorted. */
  missing(): string[] {
    return [...this.absent.keys()].sort();
  }

  /** Whether a folder is one of the agent's repositories, synced, paused or missing. */
  knows(root: string): boolean {
    return this.repositories.has(root) || this.paused.has(root) || this.absent.has(root);
  }

  /** What is known of a repository, running or paused; null for a folder the agent does not sync. */
  describe(root: string): RepositoryDescription | null {
    const absent = this.absent.get(root);
    if (absent) return this.describeAbsent(absent);
    const watched = this.repositories.get(root);
    const paused = this.paused.get(root);
    if (!watched && !paused) return null;
    const identity = watched?.identity ?? paused!;
    const status = watched?.engine.status() ?? null;
    const repoId = this.stateIdOf(identity.root);
    const stored = repoId === null ? undefined : this.state.repos().find((repo) => repo.id === repoId);
    return {
      root: identity.root,
      owner: identity.owner,
      name: identity.name,
      flowRoots: [...(watched?.engine.flowRoots ?? paused!.flowRoots)],
      status,
      counts: status?.counts ?? (repoId === null ? NO_COUNTS : this.state.counts(repoId)),
      progress: this.progress.get(identity.root) ?? null,
      lastSyncAt: stored?.lastSyncAt ?? null,
      notSent: repoId === null ? [] : this.state.warnings(repoId),
      configProblem: this.configFiles.get(identity.root)?.problem ?? null,
      reason: paused?.reason ?? null,
      syncedFrom: paused?.syncedFrom ?? null,
      ...this.pausedOf(identity.root, status),
      branch: currentBranch(identity.root),
      rename: this.renameOf(identity.root),
      refused:
        repoId === null
          ? []
          : this.state.rejections(repoId).map(({ flowPath, message }) => ({ flowPath, message })),
    };
  }

  /** Whether its user paused a repository, from its engine, else from the config (not synced, paused). */
  private pausedOf(root: string, status: SyncStatus | null): { paused: boolean; pausedSince: string | null } {
    if (status) return { paused: status.paused, pausedSince: status.pausedSince };
    const pause = pauseOf(configuredRepository(this.config, root));
    return { paused: pause !== null, pausedSince: pause?.since ?? null };
  }

  /** A repository whose folder is not there: `missing`, with what the state knew of it from its last sync. */
  private describeAbsent(absent: AbsentRepository): RepositoryDescription {
    const repoId = this.stateIdOf(absent.root);
    const stored = repoId === null ? undefined : this.state.repos().find((repo) => repo.id === repoId);
    const counts = repoId === null ? NO_COUNTS : this.state.counts(repoId);
    return {
      root: absent.root,
      owner: absent.owner,
      name: absent.name,
      flowRoots: [...absent.flowRoots],
      status: {
        phase: 'missing',
        counts,
        message: absent.problem ?? folderGone(absent.root),
        retryAt: null,
        missed: 0,
        heldDeletions: 0,
        notInCheckout: 0,
        paused: false,
        pausedSince: null,
        nothingToSync: null,
      },
      paused: false,
      pausedSince: null,
      counts,
      progress: null,
      lastSyncAt: stored?.lastSyncAt ?? null,
      notSent: repoId === null ? [] : this.state.warnings(repoId),
      configProblem: null,
      reason: null,
      syncedFrom: null,
      refused:
        repoId === null
          ? []
          : this.state.rejections(repoId).map(({ flowPath, message }) => ({ flowPath, message })),
      branch: null,
      rename: null,
    };
  }

  /** The rename waiting for a repository, as `acme/app2` and the line that says what to do; null: none. */
  private renameOf(root: string): RepositoryDescription['rename'] {
    const rename = this.renames.get(root);
    return rename ? { to: `${rename.to.owner}/${rename.to.name}`, message: rename.message } : null;
  }

  /** Whether a branch switch of a repository is being summed up (its rounds are not said one by one). */
  switchingBranch(root: string): boolean {
    return this.branches.get(root)?.switching ?? false;
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

  /** What the service does beyond the spec (history, bases), asked once per agent; null while it does not answer. */
  async capabilities(): Promise<Capabilities | null> {
    this.known ??= await serviceCapabilities(this.client);
    return this.known;
  }

  /**
   * The one line that says what this service cannot protect, or null: a service of the spec alone keeps no history
   * and cannot tell an edit of what a writer saw from an overwrite of what it never saw.
   */
  async serviceLimits(): Promise<string | null> {
    return this.limitsOf(await this.capabilities());
  }

  /**
   * serviceLimits as known now, without waiting (the window's status): while the service has not answered, it is
   * asked in the background, one question at a time, and the line comes with a later status.
   */
  knownServiceLimits(): string | null {
    if (!this.known && !this.asking)
      this.asking = this.capabilities()
        .catch(() => null)
        .finally(() => (this.asking = null));
    return this.limitsOf(this.known);
  }

  private limitsOf(capabilities: Capabilities | null): string | null {
    if (!capabilities || capabilities.bases) return null;
    return specAloneLine(this.serviceUrl);
  }

  /** A round now, of one repository or of all, even while backing off. */
  async syncNow(root?: string): Promise<void> {
    const targets = root ? [this.repositories.get(root)] : [...this.repositories.values()];
    await Promise.all(targets.map((watched) => watched?.engine.syncAndCheck()));
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
    const config = options.config ?? loadConfig();
    const secrets = options.secrets ?? createSecretStore();
    const configuredUrl = configuredServiceUrl(options.serviceUrl, config);
    let url: string;
    let auth: ClientAuth;
    let secretsUrl: string;
    let embedded: RunningService | null = null;
    let socketPath: string | null = null;
    let notice: TokensNotice | null = null;
    if (configuredUrl) {
      url = normalizeServiceUrl(configuredUrl);
      secretsUrl = url;
      auth = secretStoreAuth(secrets, url);
      if (
        (await secrets.get(url, 'access-token')) === null &&
        (await secrets.get(url, 'admin-token')) === null
      ) {
        throw new MissingCredentialsError(`No token for ${url}: run \`flowsync login --url ${url}\` first.`);
      }
    } else {
      const envPort = process.env.FLOWSYNC_EMBEDDED_PORT;
      const started = await startEmbeddedService({
        dbPath: options.serviceDbPath ?? defaultServiceDbPath(),
        port: options.embeddedPort ?? (envPort ? Number(envPort) : DEFAULT_SERVICE_PORT),
        secrets,
      });
      ({ url, auth, notice, secretsUrl } = started);
      embedded = started.service;
      socketPath = started.socketPath;
    }
    // The engine backs off on its own: the client retries only briefly before reporting a failure. The embedded
    // service through its private socket: another user holding every slot of its port cuts the agent off from nothing.
    const client = createClient({
      baseUrl: url,
      auth,
      retry: { attempts: 2, baseDelayMs: 100, maxDelayMs: 500 },
      ...(socketPath && { socketPath }),
    });
    const statePath = options.statePath ?? defaultStatePath();
    // The state's folder is flowsync's data folder, also with a remote service: 0700 (0755 before issue 8).
    ensurePrivateFolder(dirname(statePath));
    const state = openState(statePath);
    const serviceKey = embedded ? EMBEDDED_SERVICE : url;
    return new Agent({
      serviceUrl: url,
      serviceKey,
      secretsUrl,
      embedded,
      notice,
      client,
      state,
      secrets,
      hasher: new Hasher(),
      options: { ...options, config },
    });
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
    const existing = this.repositories.get(identity.root);
    if (existing && existing !== options.replace) return existing;
    if (renamed) this.renames.set(identity.root, renamed);
    else this.renames.delete(identity.root);
    await this.checkSource(identity, options.source === true);
    const pause = pauseOf(configured);
    const engine = new SyncEngine({
      repo: {
        ...identity,
        flowRoots: configured?.flowRoots ?? ['flows'],
        writer: writerName(identity.root),
        ...(configured?.holdDeletions !== undefined && {
          deletionGuard: configured.holdDeletions === false ? null : configured.holdDeletions,
        }),
      },
      client: this.client,
      state: this.state,
      hasher: this.hasher,
      serviceKey: this.serviceKey,
      rescanIntervalMs: rescanIntervalFromEnv(),
      serviceCheckIntervalMs: intervalFromEnv('FLOWSYNC_SERVICE_CHECK_MS'),
      // Paused by its user before: watched and counted from the start, nothing sent until resumed.
      ...(pause && { paused: pause }),
      ...this.options.timings,
    });
    const watched = { identity, engine };
    const branch = new BranchFollower(identity.root);
    this.branches.set(identity.root, branch);
    engine.on('status', (status) => {
      if (status.phase !== 'scanning' && status.phase !== 'syncing') this.progress.delete(identity.root);
      if (status.phase === 'syncing') branch.round(null);
      const switched = status.phase === 'idle' ? branch.settled(status.heldDeletions) : null;
      if (switched) this.emit('branch', watched, switched);
      this.emit('status', watched, status);
    });
    engine.on('progress', (progress) => {
      // Finished work shows no bar: a rescan's last step can come after the status it ends in (offline, during an
      // outage), and its "Hashing files" bar then stayed for the whole outage.
      if (progress.done >= progress.total) this.progress.delete(identity.root);
      else this.progress.set(identity.root, progress);
      this.emit('progress', watched, progress);
    });
    engine.on('synced', (report) => {
      branch.round(report);
      this.emit('synced', watched, report);
    });
    // A folder gone meanwhile is the engine's `missing`, said there; its name is looked at again at the next rescan.
    engine.on('rescanned', () => void this.recheckName(watched).catch(() => undefined));
    this.repositories.set(identity.root, watched);
    this.configFiles.set(
      identity.root,
      new RepoConfigFilePublisher(identity.root, identity.owner, identity.name, this.client),
    );
    this.paused.delete(identity.root);
    return watched;
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
    if (this.repositories.get(root) !== watched) return;
    const renamed = await pendingRename(watched.identity, configuredRepository(this.config, root));
    if (this.repositories.get(root) !== watched) return; // stopped, renamed or removed meanwhile
    if (renamed?.message === this.renames.get(root)?.message) return;
    if (renamed) this.renames.set(root, renamed);
    else this.renames.delete(root);
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
    const watched = this.repositories.get(root);
    if (watched) {
      await watched.engine.stop();
      this.repositories.delete(root);
      this.configFiles.delete(root);
    }
    this.paused.delete(root);
    this.renames.delete(root);
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
    const watched = this.repositories.get(root);
    if (!watched) return;
    await watched.engine.stop();
    this.repositories.delete(root);
    this.configFiles.delete(root);
    const { identity } = watched;
    this.paused.set(root, {
      ...identity,
      flowRoots: [...watched.engine.flowRoots],
      reason: (await notTheSource(identity, newSource)).message,
      syncedFrom: newSource,
    });
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
        const root = folderKey(repo.path);
        const absent = this.absent.get(root)!;
        this.absent.delete(root);
        this.paused.set(root, { ...absent, flowRoots: [...absent.flowRoots] });
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
      if (replace && this.repositories.get(replace.identity.root) === replace) {
        this.repositories.delete(replace.identity.root);
        this.configFiles.delete(replace.identity.root);
      }
      if (!(error instanceof NotTheSource)) throw error;
      this.paused.set(error.identity.root, {
        ...error.identity,
        flowRoots: repo.flowRoots,
        reason: error.message,
        syncedFrom: error.source,
      });
      return null;
    }
  }

  /** A repository of the config whose folder is not there: missing, under the name it was last synced as. */
  private markAbsent(repo: RepositoryConfig, problem: string | null): void {
    const root = folderKey(repo.path);
    const stored = this.state.repos().find((r) => r.root === root && r.service === this.serviceKey);
    this.absent.set(root, {
      root,
      owner: repo.owner ?? stored?.owner ?? '?',
      name: repo.name ?? stored?.name ?? basename(root),
      flowRoots: repo.flowRoots,
      configured: repo,
      problem,
    });
  }

  /**
   * The absent repositories whose folder is there now are synced as any repository at start: identified by their
   * git remote (or the config), checked as the source, and sent through the usual rules (deletions held,
   * conflicts found). One whose folder is there but cannot be synced yet stays missing, saying why.
   */
  private lookForAbsent(): Promise<void> {
    this.looking ??= (async () => {
      for (const [root, absent] of [...this.absent]) {
        if (this.closing) return;
        if (folderNotThere(absent.configured.path)) continue;
        this.absent.delete(root);
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
            this.repositories.delete(watched.identity.root);
            this.configFiles.delete(watched.identity.root);
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
    const known = [...this.repositories.values()].find(({ identity }) => sameFolder(identity.root, folder));
    if (known) return known;
    const watched = await this.addRepository(folder, configuredRepository(this.config, folder), options);
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
    const absent = this.absent.get(root);
    if (absent) {
      this.markAbsent(configured, absent.problem);
      return;
    }
    const paused = this.paused.get(root);
    if (paused) {
      this.paused.set(root, { ...paused, flowRoots });
      return;
    }
    const watched = this.repositories.get(root);
    if (!watched) return;
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
    const watched = this.repositories.get(root);
    const known = watched !== undefined || this.paused.has(root) || this.absent.has(root);
    await watched?.engine.stop();
    this.state.releaseSource(this.serviceKey, root);
    this.repositories.delete(root);
    this.configFiles.delete(root);
    this.paused.delete(root);
    this.absent.delete(root);
    this.renames.delete(root);
    this.branches.delete(root);
    this.updateConfig({
      ...this.config,
      repositories: this.config.repositories.filter((r) => !sameFolder(r.path, root)),
    });
    return known;
  }

  /**
   * Pauses a repository: nothing is sent until resumed, and what changes meanwhile is watched and counted as
   * pending (its engine keeps running, see SyncEngine.pause). Remembered in the config (`enabled: false`, `pausedAt`).
   */
  async pause(root: string): Promise<void> {
    const since = new Date().toISOString();
    const absent = this.absent.get(root);
    if (absent) {
      this.absent.delete(root);
      this.paused.set(root, { ...absent, flowRoots: [...absent.flowRoots] });
      this.setEnabled(root, false, since);
      return;
    }
    const watched = this.repositories.get(root);
    if (!watched || watched.engine.status().paused) return;
    this.setEnabled(root, false, since);
    watched.engine.pause(since);
  }

  /** Resumes a paused repository: what waited is sent at once. */
  async resume(root: string): Promise<WatchedRepository | null> {
    const running = this.repositories.get(root);
    if (running) {
      if (!running.engine.status().paused) return running;
      this.setEnabled(root, true);
      // Its name is looked at again, as at a start (a remote renamed while paused).
      await this.recheckName(running).catch(() => undefined);
      await running.engine.resume();
      return running;
    }
    const paused = this.paused.get(root);
    if (!paused) return null;
    this.setEnabled(root, true);
    const configured = configuredRepository(this.config, root);
    if (configured && folderNotThere(root)) {
      this.paused.delete(root);
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
    await Promise.all(
      [...this.repositories.values()].map(({ engine }) => engine.initialSync({ watchFirst })),
    );
  }

  /** Then watch them all. */
  async watchAll(): Promise<void> {
    this.watching = true;
    const checkConfigFiles = async () => {
      // Paused: its `.flowsync/repo-config.json` waits too (the publisher sends it at the first check after resume).
      for (const [root, publisher] of this.configFiles)
        if (!this.repositories.get(root)?.engine.status().paused) await publisher.check();
    };
    await checkConfigFiles();
    this.configTimer = setInterval(
      () => void checkConfigFiles().catch(() => {}),
      this.options.timings?.presenceIntervalMs ?? 1000,
    );
    this.configTimer.unref();
    this.absentTimer = setInterval(
      () => void this.lookForAbsent(),
      this.options.timings?.presenceIntervalMs ?? ABSENT_CHECK_MS,
    );
    this.absentTimer.unref();
    await Promise.all([...this.repositories.values()].map(({ engine }) => engine.watch()));
  }

  async close(): Promise<void> {
    this.closing = true;
    if (this.configTimer) clearInterval(this.configTimer);
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
