import { dirname } from 'node:path';
import {
  MissingCredentialsError,
  createClient,
  type ClientAuth,
  type RemoteClient,
} from '../client/index.ts';
import { defaultServiceDbPath, defaultStatePath, ensurePrivateFolder } from '../host/index.ts';
import type { RunningService } from '../service/index.ts';
import {
  createSecretStore,
  normalizeServiceUrl,
  secretStoreAuth,
  type SecretStore,
} from '../secrets/index.ts';
import { Hasher, SyncState, type SyncEngineOptions } from '../sync/index.ts';
import { DEFAULT_SERVICE_PORT, loadConfig, type AgentConfig } from './config.ts';
import type { TokensNotice } from './embedded-service.ts';
import { openState } from './open-state.ts';
import { EMBEDDED_SERVICE, configuredServiceUrl } from './service-key.ts';

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
  /**
   * Open the state without checking every page first (openState's quick_check): for `flowsync status`'s look, which
   * has just read the state (a damage its reads met is rebuilt there); the check was an eighth of its CPU at 100,000
   * files. The agent's start checks, as before.
   */
  stateUnchecked?: boolean;
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

/** What makes an agent: built by `Agent.open`. */
export interface AgentParts {
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

/**
 * What `Agent.open` starts: the service (the embedded one, or a client of the configured one with its tokens from the
 * keychain), the state, the hasher pool.
 */
export async function openAgentParts(options: AgentOptions = {}): Promise<AgentParts> {
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
    // Loaded only here: an agent of a remote service (FLOWSYNC_URL, the config's serviceUrl; `status`'s look with no
    // agent running; `conflicts`) needs none of the service's code, its database drivers (pg) nor its routes.
    const { startEmbeddedService } = await import('./embedded-service.ts');
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
  // The state's folder is flowsync's data folder, also with a remote service: 0700, since the state names every
  // file synced and the service.
  ensurePrivateFolder(dirname(statePath));
  const state = options.stateUnchecked ? new SyncState(statePath) : openState(statePath);
  const serviceKey = embedded ? EMBEDDED_SERVICE : url;
  return {
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
  };
}
