import Database from 'better-sqlite3';
import { ensurePrivateFile } from '../../host/index.ts';
import { MIGRATIONS } from './migrations.ts';

export type ServiceDatabase = Database.Database;

/** Opens (creating if needed, 0600) the service's SQLite file in WAL mode and brings its schema up to date. */
export function openServiceDatabase(path: string): ServiceDatabase {
  if (path !== ':memory:') ensurePrivateFile(path);
  const db = new Database(path);
  db.pragma('journal_mode = WAL');
  // NORMAL is durable across process crashes in WAL mode; only an OS crash can lose the last commits.
  db.pragma('synchronous = NORMAL');
  db.pragma('foreign_keys = ON');
  db.pragma('busy_timeout = 5000');
  migrate(db);
  return db;
}

function migrate(db: ServiceDatabase): void {
  const current = db.pragma('user_version', { simple: true }) as number;
  if (current > MIGRATIONS.length) {
    throw new Error(
      `The database was written by a newer flowsync (schema ${current}, this one knows ${MIGRATIONS.length}); upgrade flowsync.`,
    );
  }
  const apply = db.transaction(() => {
    for (let version = current; version < MIGRATIONS.length; version++) {
      db.exec(MIGRATIONS[version]!);
      db.pragma(`user_version = ${version + 1}`);
    }
  });
  apply();
}
