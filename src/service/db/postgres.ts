import pg from 'pg';
import { DatabaseProblem } from '../errors.ts';
import { POSTGRES_MIGRATIONS } from './postgres-migrations.ts';
import { HeldNotices, Notices } from './notices.ts';
import { PostgresListener } from './postgres-listener.ts';
import {
  redactedLocation,
  shouldMigrate,
  toNumbered,
  type Params,
  type SchemaUpdate,
  type ServiceDatabase,
  type Sql,
} from './sql.ts';

/**
 * The advisory lock that makes migrations run once when several service processes start at once: the others
 * wait for it, then find the schema current. Any fixed number; this one spells "flowsync".
 */
const MIGRATION_LOCK = 0x666c6f77;

/**
 * A transaction another process's made fail is run again, this many times at most, after a short random wait (two
 * processes that met retry at different moments).
 */
const MAX_ATTEMPTS = 10;

/**
 * Errors that mean "run it again": serialization_failure and deadlock_detected. Not unique_violation: what two
 * processes could insert at once is under a lock or an ON CONFLICT, so a duplicate key is a bug to see at once (a
 * retry would also hide an identity sequence left behind an import, each attempt using up a number).
 */
const RETRY_CODES = new Set(['40001', '40P01']);

/** bigint (count, sum, identity) and numeric (sum of a bigint) as numbers: every one the service keeps fits. */
const types = {
  getTypeParser: ((oid: number, format?: 'text' | 'binary') =>
    oid === 20 || oid === 1700
      ? (value: string) => Number(value)
      : pg.types.getTypeParser(oid, format as 'text')) as typeof pg.types.getTypeParser,
};

export interface PostgresOptions {
  /** Connections this process holds at most (default 10). */
  maxConnections?: number;
  /** Told about a connection that failed while idle (the pool drops it and opens another when needed). */
  onIdleError?: (error: Error) => void;
  /** How far its schema may be brought (default: migrated). */
  update?: SchemaUpdate;
}

/**
 * A Postgres database shared by any number of service processes. Every call that writes is one transaction (READ
 * COMMITTED), retried after a deadlock. What reads and then writes takes a lock first
 * (`sql.lock`: a transaction-scoped advisory lock): the writers of one flow take turns, so the base-hash rule (a
 * write on a stale base is a conflict) holds across processes, while writers of different flows never wait for
 * each other. SERIALIZABLE did the same without locks, but its page-level predicate locks made batches on
 * different flows abort each other: one batch of 1,000 files took 15 s of retries with only two in flight.
 * Migrations run at start under an advisory lock too.
 */
export async function openPostgres(url: string, options: PostgresOptions = {}): Promise<ServiceDatabase> {
  const location = redactedLocation(url);
  try {
    new URL(url);
  } catch {
    throw new DatabaseProblem(
      'The database URL is not one: write it as postgres://user:password@host:5432/database (--db or FLOWSYNC_DB).',
      'refused',
    );
  }
  const pool = new pg.Pool({
    connectionString: url,
    max: options.maxConnections ?? 10,
    application_name: 'flowsync',
    types,
  });
  pool.on('error', (error) => options.onIdleError?.(error));
  try {
    await migrate(pool, options.update ?? 'migrate', location);
  } catch (error) {
    await pool.end();
    throw databaseProblem(error, location, true) ?? error;
  }
  /** A call's error as it is: a database that went away mid-call is a DatabaseProblem (answered 503). */
  const said = async <T>(work: () => Promise<T>): Promise<T> => {
    try {
      return await work();
    } catch (error) {
      throw databaseProblem(error, location, false) ?? error;
    }
  };

  // This process's listeners hear its own commits at once (and also through LISTEN, a moment later), and other
  // processes' through the listening connection.
  const notices = new Notices();
  const listener = new PostgresListener(url, notices, (error) => options.onIdleError?.(error));
  const on = (client: pg.Pool | pg.PoolClient, held: HeldNotices | null = null): Sql => ({
    dialect: 'postgres',
    all: async <T>(text: string, params?: Params) =>
      (await client.query(toNumbered(text, params))).rows as T[],
    get: async <T>(text: string, params?: Params) =>
      (await client.query(toNumbered(text, params))).rows[0] as T | undefined,
    run: async (text, params) => (await client.query(toNumbered(text, params))).rowCount ?? 0,
    // The key's 64-bit hash: two keys that share one only wait for each other.
    lock: async (key) => {
      await client.query('SELECT pg_advisory_xact_lock(hashtextextended($1, 0))', [key]);
    },
    // Postgres delivers it to every LISTENing connection when the transaction commits, and never if it rolls back.
    notify: async (channel) => {
      await client.query('SELECT pg_notify($1, $2)', [channel, '']);
      if (held) held.add(channel);
      else notices.tell([channel]);
    },
  });
  const direct = on(pool);

  /**
   * One transaction on one connection: `begin`, the work, COMMIT; on a throw, ROLLBACK and the error again. A
   * connection that cannot even roll back (the server restarted, the network dropped) is not given back to the
   * pool, where the next call would meet the same error: it is closed.
   */
  const inTransaction = async <T>(begin: string, work: (sql: Sql) => Promise<T>): Promise<T> => {
    const { client, release } = await checkOut(pool);
    let broken = false;
    const held = new HeldNotices();
    try {
      await client.query(begin);
      const value = await work(on(client, held));
      await client.query('COMMIT');
      held.commit(notices);
      return value;
    } catch (error) {
      broken = await client.query('ROLLBACK').then(
        () => false,
        () => true,
      );
      throw error;
    } finally {
      release(broken);
    }
  };

  return {
    dialect: 'postgres',
    location,
    transaction: (work) =>
      said(async () => {
        for (let attempt = 1; ; attempt++) {
          try {
            return await inTransaction('BEGIN', work);
          } catch (error) {
            if (attempt >= MAX_ATTEMPTS || !RETRY_CODES.has((error as { code?: string }).code ?? ''))
              throw error;
          }
          await new Promise((resolve) => setTimeout(resolve, Math.random() * 10 * attempt));
        }
      }),
    read: (work) => said(() => work(direct)),
    // REPEATABLE READ READ ONLY: one snapshot for every statement, and nothing to retry (a read-only transaction
    // never fails to serialize at this level).
    snapshot: (work) => said(() => inTransaction('BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY', work)),
    listen: (channel, onNotify) => {
      const listening = notices.listen(channel, onNotify, () => listener.heard);
      listener.add(channel);
      return listening;
    },
    close: async () => {
      await listener.close();
      await pool.end();
    },
  };
}

/**
 * A connection of the pool for a transaction. The pool listens for a connection's errors only while it is idle;
 * one that the server drops while checked out (a restart, a network cut) emitted an 'error' nobody heard, and that
 * ended the service process: a Postgres restart with calls in flight stopped every process at once. Here it is
 * heard, the call in flight fails (and is answered so), and the connection is closed on release, not reused.
 */
async function checkOut(
  pool: pg.Pool,
): Promise<{ client: pg.PoolClient; release: (broken: boolean) => void }> {
  const client = await pool.connect();
  let dropped = false;
  const onError = () => {
    dropped = true;
  };
  client.on('error', onError);
  return {
    client,
    release: (broken) => {
      client.removeListener('error', onError);
      client.release(broken || dropped);
    },
  };
}

async function migrate(pool: pg.Pool, update: SchemaUpdate, location: string): Promise<void> {
  const { client, release } = await checkOut(pool);
  try {
    await client.query('BEGIN');
    await client.query('SELECT pg_advisory_xact_lock($1)', [MIGRATION_LOCK]);
    // Read before anything is created: an export or import that may not migrate writes nothing.
    const known = (
      await client.query<{ found: string | null }>("SELECT to_regclass('flowsync_schema') AS found")
    ).rows[0]!.found;
    const row = known
      ? (await client.query<{ version: number }>('SELECT version FROM flowsync_schema')).rows[0]
      : undefined;
    const current = row?.version ?? 0;
    if (!shouldMigrate(current, POSTGRES_MIGRATIONS.length, update, location)) {
      await client.query('COMMIT');
      return;
    }
    await client.query('CREATE TABLE IF NOT EXISTS flowsync_schema (version INTEGER NOT NULL)');
    for (let version = current; version < POSTGRES_MIGRATIONS.length; version++) {
      await client.query(POSTGRES_MIGRATIONS[version]!);
    }
    if (row === undefined)
      await client.query('INSERT INTO flowsync_schema (version) VALUES ($1)', [POSTGRES_MIGRATIONS.length]);
    else await client.query('UPDATE flowsync_schema SET version = $1', [POSTGRES_MIGRATIONS.length]);
    await client.query('COMMIT');
  } catch (error) {
    await client.query('ROLLBACK').catch(() => undefined);
    throw error;
  } finally {
    release(false);
  }
}

/**
 * pg's own errors for a connection that went away under a query: they carry no code, only these words.
 * (node_modules/pg/lib/client.js and pg-pool, 8.x.)
 */
const CONNECTION_LOST = [
  'Connection terminated',
  'Client has encountered a connection error and is not queryable',
  'Client was closed and is not queryable',
  'timeout exceeded when trying to connect',
];

/**
 * What a person can do about a database that cannot be had, in one line; null for anything else (a bug, or a
 * refusal of the service's own, which is never one of these). `opening`: at start, where Postgres's own words about
 * TLS are the clue; later, a server that went away mid-call (restarted, stopped, its connections ended) is said too.
 */
function databaseProblem(error: unknown, location: string, opening: boolean): DatabaseProblem | null {
  if (!(error instanceof Error) || error instanceof DatabaseProblem) return null;
  const { code, message } = error as Error & { code?: string };
  const database = decodeURIComponent(new URL(location).pathname.slice(1)) || 'postgres';
  const gone = () =>
    new DatabaseProblem(
      `Postgres at ${location} ended the connection (${code ?? message}): is it being restarted or stopped?`,
      'unreachable',
    );
  if (code === undefined && CONNECTION_LOST.some((words) => message.startsWith(words))) return gone();
  switch (code) {
    case 'ECONNREFUSED':
    case 'ENOTFOUND':
    case 'EAI_AGAIN':
    case 'ETIMEDOUT':
    case 'EHOSTUNREACH':
    case '57P03': // the server is starting or stopping
      return new DatabaseProblem(
        `Cannot reach Postgres at ${location} (${code}): is it running there, and are the host and port right?`,
        'unreachable',
      );
    case 'ECONNRESET':
    case 'EPIPE':
    case '57P01': // admin_shutdown: the server stops, or an administrator ended the connection
    case '57P02': // crash_shutdown
    case '08000':
    case '08003':
    case '08006':
      return gone();
    case '53300':
      return new DatabaseProblem(
        `Postgres at ${location} has no connection left (53300): raise its max_connections, or run fewer service processes (each holds up to 10).`,
        'unreachable',
      );
    case '53100':
      return new DatabaseProblem(
        `Postgres at ${location} cannot write: its disk is full (53100). Free some space on the database's disk.`,
        'storage',
      );
    case '28P01':
    case '28000':
      return new DatabaseProblem(
        `Postgres at ${location} refused the sign-in: check the user and password in the URL (--db or FLOWSYNC_DB).`,
        'refused',
      );
    case '3D000':
      return new DatabaseProblem(
        `The database "${database}" does not exist at ${location}: create it (createdb ${database}), or name another in the URL.`,
        'refused',
      );
    case '42501':
      return new DatabaseProblem(
        `The URL's user may not create the service's tables in "${database}" at ${location}: run the first start as the database's owner, or grant it CREATE.`,
        'refused',
      );
    default:
      // A server that asks for TLS the URL did not set up, and the like: Postgres's own words are the clue.
      return opening && code === undefined && message.includes('SSL')
        ? new DatabaseProblem(`Postgres at ${location}: ${message}`, 'refused')
        : null;
  }
}
