import pg from 'pg';
import { POSTGRES_MIGRATIONS } from './postgres-migrations.ts';
import { redactedLocation, toNumbered, type Params, type ServiceDatabase, type Sql } from './sql.ts';

/**
 * The advisory lock that makes migrations run once when several service processes start at once: the others
 * wait for it, then find the schema current. Any fixed number; this one spells "flowsync".
 */
const MIGRATION_LOCK = 0x666c6f77;

/**
 * A transaction that failed to serialize against another process's is run again, this many times at most, after
 * a short random wait (two processes writing the same flow retry at different moments).
 */
const MAX_ATTEMPTS = 10;

/**
 * Errors that mean "run it again": serialization_failure, deadlock_detected, and unique_violation (a row two
 * transactions inserted at once; under SERIALIZABLE Postgres reports most of these as the first).
 */
const RETRY_CODES = new Set(['40001', '40P01', '23505']);

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
}

/**
 * A Postgres database shared by any number of service processes. Every call that writes is one SERIALIZABLE
 * transaction, retried when another process's made it fail: the base-hash rule (a write on a stale base is a
 * conflict) holds across processes without a lock of our own. Migrations run at start under an advisory lock.
 */
export async function openPostgres(url: string, options: PostgresOptions = {}): Promise<ServiceDatabase> {
  const pool = new pg.Pool({
    connectionString: url,
    max: options.maxConnections ?? 10,
    application_name: 'flowsync',
    types,
  });
  pool.on('error', (error) => options.onIdleError?.(error));
  try {
    await migrate(pool);
  } catch (error) {
    await pool.end();
    throw error;
  }

  const on = (client: pg.Pool | pg.PoolClient): Sql => ({
    dialect: 'postgres',
    all: async <T>(text: string, params?: Params) =>
      (await client.query(toNumbered(text, params))).rows as T[],
    get: async <T>(text: string, params?: Params) =>
      (await client.query(toNumbered(text, params))).rows[0] as T | undefined,
    run: async (text, params) => (await client.query(toNumbered(text, params))).rowCount ?? 0,
  });
  const direct = on(pool);

  return {
    dialect: 'postgres',
    location: redactedLocation(url),
    async transaction(work) {
      for (let attempt = 1; ; attempt++) {
        const client = await pool.connect();
        try {
          await client.query('BEGIN ISOLATION LEVEL SERIALIZABLE');
          const value = await work(on(client));
          await client.query('COMMIT');
          return value;
        } catch (error) {
          await client.query('ROLLBACK').catch(() => undefined);
          if (attempt >= MAX_ATTEMPTS || !RETRY_CODES.has((error as { code?: string }).code ?? ''))
            throw error;
        } finally {
          client.release();
        }
        await new Promise((resolve) => setTimeout(resolve, Math.random() * 10 * attempt));
      }
    },
    read: (work) => work(direct),
    async snapshot(work) {
      const client = await pool.connect();
      try {
        // REPEATABLE READ READ ONLY: one snapshot for every statement, and nothing to retry (a read-only
        // transaction never fails to serialize at this level).
        await client.query('BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY');
        const value = await work(on(client));
        await client.query('COMMIT');
        return value;
      } catch (error) {
        await client.query('ROLLBACK').catch(() => undefined);
        throw error;
      } finally {
        client.release();
      }
    },
    close: () => pool.end(),
  };
}

async function migrate(pool: pg.Pool): Promise<void> {
  const client = await pool.connect();
  try {
    await client.query('BEGIN');
    await client.query('SELECT pg_advisory_xact_lock($1)', [MIGRATION_LOCK]);
    await client.query('CREATE TABLE IF NOT EXISTS flowsync_schema (version INTEGER NOT NULL)');
    const row = (await client.query<{ version: number }>('SELECT version FROM flowsync_schema')).rows[0];
    const current = row?.version ?? 0;
    if (current > POSTGRES_MIGRATIONS.length) {
      throw new Error(
        `The database was written by a newer flowsync (schema ${current}, this one knows ${POSTGRES_MIGRATIONS.length}); upgrade flowsync.`,
      );
    }
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
    client.release();
  }
}
