import { openPostgres, type PostgresOptions } from './postgres.ts';
import { isPostgresUrl, type ServiceDatabase } from './sql.ts';
import { openSqlite } from './sqlite.ts';

export type { Dialect, Listening, Params, SchemaUpdate, ServiceDatabase, Sql } from './sql.ts';
export { isPostgresUrl, redactedLocation, withoutPassword } from './sql.ts';

/**
 * The service's database: a Postgres URL (`postgres://user@host/db`) opens that database, shared with other
 * service processes; anything else is a SQLite file, created 0600 when missing. Either way its schema is brought up
 * to date, as far as `options.update` allows (default: any older schema is migrated).
 */
export async function openServiceDatabase(
  location: string,
  options: PostgresOptions = {},
): Promise<ServiceDatabase> {
  return isPostgresUrl(location) ? openPostgres(location, options) : openSqlite(location, options.update);
}
