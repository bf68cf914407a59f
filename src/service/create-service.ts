import { chmodSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import pino, { type DestinationStream, type Level, type Logger } from 'pino';
import { openServiceDatabase } from './db/open.ts';
import { summingLog } from '../host/index.ts';
import { buildApp, DEFAULT_BODY_LIMIT } from './http/app.ts';
import { MemberLimits, type MemberRate } from './http/member-limits.ts';
import { connectionLimits, serverOptions, type ConnectionLimits } from './http/connection-limits.ts';
import { AccessTokens, type IssuedTokens } from './store/access-tokens.ts';
import { Credentials, DEFAULT_CREDENTIAL_OPTIONS } from './store/credentials.ts';
import { MEMBERS_CHANNEL, MemberStore } from './store/members.ts';
import type { Listening } from './db/sql.ts';
import { AuditLog } from './store/audit-log.ts';
import { localActor } from './members-local.ts';
import { ApiKeys } from './store/api-keys.ts';
import { ChangeFeed, createImplementations } from './functions/index.ts';
import { DEFAULT_RETENTION, FileHistory, type HistoryRetention } from './store/file-history.ts';
import { tunable } from '../host/index.ts';

/**
 * Connections the service holds at once: each is a file descriptor, and 20,000 of them took all of the agent's. An
 * agent keeps two or three; the embedded service (one user) has room to spare.
 */
const SERVICE_MAX_CONNECTIONS = 256;

/**
 * Connections a team's service (`flowsync serve`) holds at once: each agent keeps two or three, and one more held
 * by its live feed (`changes`). A thousand agents on one process fit; over the cap other users' connections are
 * closed first (connection-limits.ts), and a long call costs the service a socket and a few KB (bench/live.ts,
 * 1,000 of them).
 */
export const TEAM_MAX_CONNECTIONS = 4096;

export interface ServiceOptions {
  /**
   * The database: a SQLite file (created when missing, with its folder), or a Postgres URL (`postgres://…`) that
   * several service processes may share.
   */
  dbPath: string;
  /** Default 127.0.0.1: the service is for this machine unless told otherwise. */
  host?: string;
  /** Default 0: any free port (read it back from `url`). */
  port?: number;
  bodyLimit?: number;
  /** Default: 256 connections at once, idle ones closed after 30 s (see connection-limits.ts). */
  limits?: ConnectionLimits;
  /** The connections open at once, with the default time-outs (ignored when `limits` is given). */
  maxConnections?: number;
  logLevel?: Level | 'silent';
  /** Replace the stored tokens with new ones, shown once in `issuedTokens`. */
  newTokens?: boolean;
  /** Where log lines go (default stderr). */
  logDestination?: DestinationStream;
  /** How long and how much of the flows' history is kept (default 30 days, 256 MiB per repository). */
  retention?: Partial<HistoryRetention>;
  /**
   * Calls each member may make per process (`flowsync serve`: 100 a second, 400 at once, memberRateFromEnv); none
   * by default (the embedded service has one user, the agent).
   */
  memberRate?: MemberRate | null;
  /**
   * Also serve on this Unix socket (the embedded service: in the agent's 0700 data folder), a channel no other user
   * can open, so no one can fill its connection slots: on the TCP port, any local process can hold all 256.
   */
  socketPath?: string;
  /**
   * The embedded service: its shared tokens act as one operator member of this name (the OS user's), so
   * its history shows a name and nothing else changes. `flowsync serve` leaves it unset: the shared members.
   */
  owner?: string;
  /**
   * Whether a member may renew their own token (renew_token): by default yes, so an active device never lapses;
   * `serve --no-self-renew` makes every token end at its expiry, a new invite its only sequel.
   */
  selfRenew?: boolean;
}

/**
 * History past its retention is pruned at start and then this often ($FLOWSYNC_HISTORY_PRUNE_MS; tests shrink it).
 * An hour: retention is counted in days, and one pass over 100,000 versions is a few milliseconds of indexed deletes.
 */
const PRUNE_INTERVAL_MS = 60 * 60 * 1000;

export interface RunningService {
  /** Base URL, e.g. http://127.0.0.1:7420 (functions are under /api/run/). */
  url: string;
  port: number;
  /** The tokens created on the first start of this database (or by `newTokens`), else null. Shown once. */
  issuedTokens: IssuedTokens | null;
  /** The database, as it may be shown: a file path, or a Postgres URL without its password. */
  database: string;
  /** The Unix socket it also serves on (ServiceOptions.socketPath), when it could; else null. */
  socketPath: string | null;
  /** Calls to `changes` held now, waiting for a write (a live team's agents). */
  heldCalls(): number;
  close(): Promise<void>;
}

export async function createService(options: ServiceOptions): Promise<RunningService> {
  const logger: Logger = pino(
    { level: options.logLevel ?? 'info', base: { svc: 'flowsync' } },
    options.logDestination ?? summedStderr(),
  );
  const db = await openServiceDatabase(options.dbPath, {
    onIdleError: (error) => logger.warn({ err: error }, 'a database connection failed while idle'),
  });
  const tokens = new AccessTokens(db);
  // Who may call: the members' tokens and the shared ones. Every process polls the members' epoch
  // ($FLOWSYNC_MEMBERS_POLL_MS) and, on Postgres, refuses calls while its list is older than
  // $FLOWSYNC_MEMBERS_FRESH_MS (1 s): a member removed through another process is refused here within that time.
  // A change another process made is heard at once through Postgres's LISTEN (MemberStore.bumpEpoch notifies in
  // the change's transaction); the poll stays for a notification lost with a connection.
  const credentialOptions = {
    pollMs: tunable('FLOWSYNC_MEMBERS_POLL_MS', DEFAULT_CREDENTIAL_OPTIONS.pollMs),
    freshMs: tunable('FLOWSYNC_MEMBERS_FRESH_MS', DEFAULT_CREDENTIAL_OPTIONS.freshMs),
    failClosed: db.dialect === 'postgres',
    ownerId: null as string | null,
  };
  const credentials = new Credentials(db, tokens, credentialOptions);
  let issuedTokens: IssuedTokens | null;
  let membersListening: Listening | null = null;
  try {
    issuedTokens = options.newTokens ? await tokens.reissue() : await tokens.issueIfNone();
    // The shared tokens' members; and other processes take reissued shared tokens as any change of the list.
    await db.transaction(async (sql) => {
      const members = new MemberStore(sql);
      await members.ensureShared();
      // Before the list is first read (credentials.start below), so the first call already has the name.
      if (options.owner) credentialOptions.ownerId = await members.ensureOwner(options.owner);
      if (issuedTokens) await members.bumpEpoch();
      if (options.newTokens)
        await new AuditLog(sql).append(
          { local: localActor() },
          { action: 'shared_tokens_reissued', target: 'shared', detail: {}, traceId: null },
        );
    });
    await credentials.start();
    membersListening = db.listen(MEMBERS_CHANNEL, () => void credentials.membersChanged());
  } catch (error) {
    credentials.stop();
    await db.close();
    throw error;
  }
  const retention = { ...DEFAULT_RETENTION, ...options.retention };
  const prune = async () => {
    try {
      const removed = await db.transaction(async (sql) => {
        const pruned = await new FileHistory(sql).prune(retention);
        // A cut of the size cap names whose writes filled it (a history erased by one member's writes is said as
        // theirs).
        for (const cut of pruned.cuts)
          await new AuditLog(sql).append(
            { system: true },
            {
              action: 'history_capped',
              target: cut.repo,
              detail: { versions: cut.versions, cap_bytes: retention.bytes, filled_by: cut.filledBy },
              traceId: null,
            },
          );
        return pruned.removed;
      });
      if (removed > 0) logger.info({ removed, retention }, 'history pruned');
    } catch (error) {
      // A full disk or a busy database: the next pass tries again; history only grows meanwhile.
      logger.warn({ err: error }, 'history could not be pruned');
    }
  };
  await prune();
  const pruning = setInterval(() => void prune(), tunable('FLOWSYNC_HISTORY_PRUNE_MS', PRUNE_INTERVAL_MS));
  pruning.unref();
  const stopTimers = () => {
    clearInterval(pruning);
    membersListening?.stop();
    credentials.stop();
  };
  const limits = options.limits ?? connectionLimits(options.maxConnections ?? SERVICE_MAX_CONNECTIONS);
  const feed = new ChangeFeed(db);
  const app = buildApp(
    {
      credentials,
      limits: new MemberLimits(options.memberRate ?? null),
      findApiKey: (secret) => db.read((sql) => new ApiKeys(sql).findBySecret(secret)),
      databaseAnswers: () =>
        db
          .read((sql) => sql.get('SELECT 1 AS up'))
          .then(
            () => true,
            () => false,
          ),
      implementations: createImplementations({
        db,
        retention,
        feed,
        membersChanged: () => credentials.membersChanged(),
        selfRenew: options.selfRenew ?? true,
      }),
    },
    {
      logger,
      bodyLimit: options.bodyLimit ?? DEFAULT_BODY_LIMIT,
      limits,
    },
  );
  try {
    await app.listen({ host: options.host ?? '127.0.0.1', port: options.port ?? 0 });
  } catch (error) {
    stopTimers();
    await db.close();
    throw error;
  }
  const privateServer = options.socketPath ? await servePrivately(app, options.socketPath, limits) : null;
  const address = app.server.address();
  const port = typeof address === 'object' && address ? address.port : (options.port ?? 0);
  const host = options.host ?? '127.0.0.1';
  const urlHost = host.includes(':') ? `[${host}]` : host;
  logger.info({ url: `http://${urlHost}:${port}`, db: db.location }, 'service listening');

  let closed = false;
  return {
    url: `http://${urlHost}:${port}`,
    port,
    issuedTokens,
    database: db.location,
    socketPath: privateServer ? options.socketPath! : null,
    heldCalls: () => feed.waiting,
    async close() {
      if (closed) return;
      closed = true;
      stopTimers();
      // The long calls waiting for a write answer now (nothing yet): closing would wait for each to end on its own.
      feed.close();
      if (privateServer) {
        privateServer.closeAllConnections();
        await new Promise((done) => privateServer.close(done));
        rmSync(options.socketPath!, { force: true });
      }
      await app.close();
      await db.close();
      logger.flush();
    },
  };
}

/**
 * The same routes on a Unix socket, with the same limits. A socket file left by a run that crashed is replaced: its
 * folder is the user's own (0700), so nobody else can have put it there. Null where there is no such socket
 * (Windows), or its path is too long for one (108 bytes on Linux): the TCP port still serves.
 */
async function servePrivately(
  app: ReturnType<typeof buildApp>,
  socketPath: string,
  limits: ConnectionLimits,
): Promise<Server | null> {
  if (process.platform === 'win32' || Buffer.byteLength(socketPath) > 100) return null;
  const { http, ...timeouts } = serverOptions(limits);
  const server = createServer(
    { ...http, requestTimeout: timeouts.requestTimeout, keepAliveTimeout: timeouts.keepAliveTimeout },
    (request, response) => app.routing(request, response),
  );
  server.timeout = timeouts.connectionTimeout;
  server.maxConnections = limits.maxConnections;
  rmSync(socketPath, { force: true });
  try {
    await new Promise<void>((listening, failed) => {
      server.once('error', failed);
      server.listen(socketPath, listening);
    });
  } catch {
    return null;
  }
  // The user's alone, as every file of its folder (0600): the folder's 0700 already keeps others out, and a socket
  // made with the process's umask (0755) would be the one file there readable by others if the folder were opened.
  chmodSync(socketPath, 0o600);
  return server;
}

/** Standard error, where `flowsync serve` logs unless told a file: a flood of one line is summed up there too. */
function summedStderr(): DestinationStream {
  const stderr = pino.destination({ dest: 2, sync: false });
  return summingLog((text) => stderr.write(text), { flush: () => stderr.flush() });
}
