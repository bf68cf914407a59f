import { userInfo } from 'node:os';
import { dirname, join } from 'node:path';
import { checkAccess, createClient, reasonOf, type ClientAuth } from '../client/index.ts';
import { memberNameOf } from '../protocol/index.ts';
import { createService, type IssuedTokens, type RunningService } from '../service/index.ts';
import { ensurePrivateFolder, logUnexpected, openLogFile, privateSocketPlace } from '../host/index.ts';
import { EMBEDDED_SECRETS, embeddedSecrets, type SecretStore } from '../secrets/index.ts';

export interface EmbeddedService {
  service: RunningService;
  url: string;
  /** Where its tokens are filed in the keychain: `embedded:<database>`, a name no address reads back. */
  secretsUrl: string;
  auth: ClientAuth;
  /**
   * The Unix socket the agent reaches it through (service.sock in the 0700 data folder, or in a 0700 folder of its
   * own when that path is too long for a socket), which no other user can open or fill; null where there is none
   * (the TCP port then). The port is for curl, and for `flowsync call` where there is no socket.
   */
  socketPath: string | null;
  /** Where the tokens are, when that changed; else null. */
  notice: TokensNotice | null;
}

/** Where the embedded service's tokens are: a line to show, and, when nothing keeps them, the tokens themselves. */
export interface TokensNotice {
  line: string;
  /** The tokens, for a terminal only: never for a pipe or a log (an autostart entry's stdout goes to the journal). */
  forTerminal: string | null;
}

/**
 * The service inside the agent, on 127.0.0.1, sharing `flowsync serve`'s database. Its tokens live in the
 * keychain under `embedded:<database>`, not under an address: its port is whichever it got, and the agent lock says which
 * (`flowsync call` finds it there). When the agent has no working token for it (first start, a lost keychain
 * entry), it issues new ones: it owns this service.
 */
export async function startEmbeddedService(options: {
  dbPath: string;
  port: number;
  secrets: SecretStore;
}): Promise<EmbeddedService> {
  // The service's folder is flowsync's data folder: every synced flow is in it.
  ensurePrivateFolder(dirname(options.dbPath));
  // 0600, rotated at 5 MiB while running, a refused call repeated 400,000 times summed up in one line.
  const logDestination = openLogFile(join(dirname(options.dbPath), 'service.log'));
  // Made once: a folder of its own (a data folder whose path is too long for a socket) is removed with the service
  // that is kept, not with the one closed below to issue new tokens.
  const place = privateSocketPlace(dirname(options.dbPath), 'service.sock');
  const kept = (running: RunningService): RunningService => ({
    ...running,
    close: async () => {
      await running.close();
      place?.remove();
    },
  });
  const start = async (newTokens: boolean): Promise<RunningService> => {
    const config = {
      dbPath: options.dbPath,
      host: '127.0.0.1',
      logLevel: 'info' as const,
      logDestination,
      newTokens,
      // One developer's service: its tokens act as one member named after the OS user, so history shows a name.
      owner: memberNameOf(osUser()),
      ...(place && { socketPath: place.path }),
    };
    try {
      return await createService({ ...config, port: options.port });
    } catch (error) {
      // `flowsync serve` (or another agent) already has the port: the same database on another port is fine.
      if ((error as NodeJS.ErrnoException).code !== 'EADDRINUSE') throw error;
      return createService({ ...config, port: 0 });
    }
  };

  const secretsUrl = embeddedSecrets(options.dbPath);
  let service = await start(false);
  let tokens = service.issuedTokens;
  if (!tokens) {
    // Checked against this process's own service (service.url), so no token leaves the agent here. Tokens an
    // older flowsync filed under plain "embedded" or under the preferred address are taken over, when they work.
    const legacy = options.port === 0 ? [] : [`http://127.0.0.1:${options.port}`];
    for (const filedUnder of [secretsUrl, EMBEDDED_SECRETS, ...legacy]) {
      const stored = await readTokens(options.secrets, filedUnder);
      if (!stored || !(await works(service, stored))) continue;
      if (filedUnder !== secretsUrl) await takeOver(options.secrets, filedUnder, secretsUrl, stored);
      return {
        service: kept(service),
        url: service.url,
        secretsUrl,
        auth: bothTokens(stored),
        socketPath: service.socketPath,
        notice: null,
      };
    }
    await service.close();
    service = await start(true);
    tokens = service.issuedTokens!;
  }
  const inKeychain = await keepTokens(options.secrets, secretsUrl, tokens);
  return {
    service: kept(service),
    url: service.url,
    secretsUrl,
    auth: bothTokens(tokens),
    socketPath: service.socketPath,
    notice: inKeychain
      ? {
          line: `The embedded service's tokens are in the OS keychain (flowsync / ${secretsUrl}#access-token, #admin-token).`,
          forTerminal: null,
        }
      : // Not kept anywhere: shown this once on a terminal (as `flowsync serve` does) so `flowsync call` and curl
        // can use them.
        {
          line:
            "No OS keychain: the embedded service's tokens live in memory for this run only, and are shown only " +
            'on a terminal (start the agent from one to call it from another).',
          forTerminal:
            `To call it from another terminal:\n  export FLOWSYNC_URL=${service.url} FLOWSYNC_TOKEN=${tokens.user} ` +
            `FLOWSYNC_ADMIN_TOKEN=${tokens.admin}`,
        },
  };
}

async function readTokens(secrets: SecretStore, url: string): Promise<IssuedTokens | null> {
  try {
    const user = await secrets.get(url, 'access-token');
    const admin = await secrets.get(url, 'admin-token');
    return user && admin ? { user, admin } : null;
  } catch {
    return null;
  }
}

/** Files an older flowsync's tokens (and the tracker API key kept beside them) under this database's name. */
async function takeOver(
  secrets: SecretStore,
  legacy: string,
  secretsUrl: string,
  tokens: IssuedTokens,
): Promise<void> {
  await keepTokens(secrets, secretsUrl, tokens);
  const moving = logUnexpected("moving an older flowsync's tracker API key");
  const apiKey = await secrets.get(legacy, 'api-key').catch((error: unknown) => void moving(error));
  if (apiKey) await secrets.set(secretsUrl, 'api-key', apiKey).catch(moving);
}

async function keepTokens(secrets: SecretStore, url: string, tokens: IssuedTokens): Promise<boolean> {
  try {
    await secrets.set(url, 'access-token', tokens.user);
    await secrets.set(url, 'admin-token', tokens.admin);
    return true;
  } catch {
    return false;
  }
}

async function works(service: RunningService, tokens: IssuedTokens): Promise<boolean> {
  const client = createClient({
    baseUrl: service.url,
    auth: { userToken: tokens.user },
    retry: { attempts: 1 },
    ...(service.socketPath && { socketPath: service.socketPath }),
  });
  try {
    await checkAccess(client);
    return true;
  } catch (error) {
    if (reasonOf(error) === 'unauthenticated') return false;
    throw error;
  } finally {
    await client.close();
  }
}

/** The agent owns this service: the admin token for operator functions, the user token for the rest. */
function bothTokens(tokens: IssuedTokens): ClientAuth {
  return (access) =>
    access === 'admin' ? { scheme: 'Admin', token: tokens.admin } : { scheme: 'Bearer', token: tokens.user };
}

/** The OS user's name ($USER where the OS has none to say, as in a container without a passwd entry). */
function osUser(): string {
  try {
    return userInfo().username;
  } catch {
    return process.env.USER ?? process.env.USERNAME ?? 'owner';
  }
}
