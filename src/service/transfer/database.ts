import { existsSync } from 'node:fs';
import {
  isPostgresUrl,
  openServiceDatabase,
  redactedLocation,
  withoutPassword,
  type ServiceDatabase,
} from '../db/open.ts';
import { DatabaseProblem } from '../errors.ts';
import { TransferRefused } from './format.ts';

/**
 * The database an export reads or an import writes, opened as the service opens it, but of this flowsync's schema
 * only: an older one is refused, not migrated (an import creates the schema of a new database). What keeps it from
 * opening is the user's to fix (Postgres not running there, a wrong password, no such database, a file that is not
 * a database): said in a line that names the database without its password.
 */
export async function openTransferDatabase(
  location: string,
  purpose: 'export' | 'import',
): Promise<ServiceDatabase> {
  const postgres = isPostgresUrl(location);
  // openServiceDatabase creates a missing SQLite file: an export of a mistyped path would make one and export
  // nothing. An import may create it (a new, empty database is what it wants).
  if (purpose === 'export' && !postgres && !existsSync(location)) {
    throw new TransferRefused(
      `There is no service database at ${location}: give --db the file \`flowsync serve\` uses, or a postgres:// URL.`,
    );
  }
  try {
    // Never migrated here: an older `flowsync serve` may be running on it. An import may create a new one's schema.
    return await openServiceDatabase(location, { update: purpose === 'import' ? 'create' : 'none' });
  } catch (error) {
    // Said in one line already (unreachable, sign-in refused, no such database), as `serve` says it.
    if (error instanceof DatabaseProblem) throw error;
    const code = (error as { code?: unknown } | null)?.code;
    if (!(error instanceof Error) || (!postgres && typeof code !== 'string')) throw error;
    throw new TransferRefused(
      `Could not open ${redactedLocation(location)}: ${withoutPassword(error.message, location)}.`,
    );
  }
}
