import { dirname } from 'node:path';
import Database from 'better-sqlite3';
import { ensurePrivateFile, storageFaultLine, storageFaultOf } from '../../host/index.ts';
import { DatabaseProblem } from '../errors.ts';
import { SQLITE_MIGRATIONS } from './migrations.ts';
import { HeldNotices, Notices } from './notices.ts';
import { shouldMigrate, type Params, type SchemaUpdate, type ServiceDatabase, type Sql } from './sql.ts';

/**
 * The service's SQLite file (created 0600 when missing) in WAL mode, its schema brought up to date (as far as
 * `update` allows). One process writes it: calls run one at a time, each whole before the next begins, as they did
 * when every function was synchronous. A statement is prepared once and kept: the stores' texts are a few hundred,
 * the same strings each time (db/rows.ts).
 */
export function openSqlite(path: string, update: SchemaUpdate = 'migrate'): ServiceDatabase {
  if (path !== ':memory:') ensurePrivateFile(path);
  const db = new Database(path);
  db.pragma('journal_mode = WAL');
  // NORMAL is durable across process crashes in WAL mode; only an OS crash can lose the last commits.
  db.pragma('synchronous = NORMAL');
  db.pragma('foreign_keys = ON');
  db.pragma('busy_timeout = 5000');
  try {
    migrate(db, path, update);
  } catch (error) {
    db.close();
    throw error;
  }

  const prepared = new Map<string, Database.Statement>();
  const statement = (text: string) => {
    let found = prepared.get(text);
    if (!found) prepared.set(text, (found = db.prepare(text)));
    return found;
  };
  // One process, one writer: a transaction's notifications are told to this process's listeners when it commits.
  const notices = new Notices();
  let held: HeldNotices | null = null;
  const bind = (params: Params | undefined): unknown[] =>
    params === undefined ? [] : Array.isArray(params) ? params : [params];
  const sql: Sql = {
    dialect: 'sqlite',
    all: async <T>(text: string, params?: Params) => statement(text).all(...bind(params)) as T[],
    get: async <T>(text: string, params?: Params) => statement(text).get(...bind(params)) as T | undefined,
    run: async (text, params) => statement(text).run(...bind(params)).changes,
    lock: async () => undefined,
    notify: async (channel) => {
      if (held) held.add(channel);
      else notices.tell([channel]);
    },
  };

  // One call at a time: its statements may await, and another call's would otherwise run inside its transaction.
  // A call that finds none running or waiting starts at once (most do: a statement never waits for I/O here);
  // the others queue behind the last one. Counted from the moment a call asks, so none overtakes a queued one.
  // A write the file's disk refused (full, read-only, failing) is a DatabaseProblem: answered 503, said in the log
  // in one line, and gone once the disk takes writes again (the transaction was rolled back whole).
  let asked = 0;
  let queue: Promise<unknown> = Promise.resolve();
  const exclusive = <T>(work: () => Promise<T>): Promise<T> => {
    const start = async () => {
      try {
        return await work();
      } catch (error) {
        const fault = storageFaultOf(error);
        throw fault === null ? error : new DatabaseProblem(storageFaultLine(fault, dirname(path)), 'storage');
      } finally {
        asked--;
      }
    };
    const result = asked++ === 0 ? start() : queue.then(start);
    queue = result.catch(() => undefined);
    return result;
  };
  const begin = db.prepare('BEGIN IMMEDIATE');
  // Deferred: the read lock (and the WAL snapshot) is taken by the first SELECT, and no write lock ever.
  const beginRead = db.prepare('BEGIN DEFERRED');
  const commit = db.prepare('COMMIT');
  const rollback = db.prepare('ROLLBACK');

  return {
    dialect: 'sqlite',
    location: path,
    transaction: (work) =>
      exclusive(async () => {
        begin.run();
        const told = (held = new HeldNotices());
        try {
          const value = await work(sql);
          commit.run();
          held = null;
          told.commit(notices);
          return value;
        } catch (error) {
          held = null;
          if (db.inTransaction) rollback.run();
          throw error;
        }
      }),
    read: (work) => exclusive(() => work(sql)),
    // Every writer is this process: its listeners hear every notification, always.
    listen: (channel, onNotify) => notices.listen(channel, onNotify, () => true),
    snapshot: (work) =>
      exclusive(async () => {
        beginRead.run();
        try {
          return await work(sql);
        } finally {
          if (db.inTransaction) commit.run();
        }
      }),
    async close() {
      await queue;
      db.close();
    },
  };
}

function migrate(db: Database.Database, path: string, update: SchemaUpdate): void {
  const current = db.pragma('user_version', { simple: true }) as number;
  if (!shouldMigrate(current, SQLITE_MIGRATIONS.length, update, path)) return;
  const apply = db.transaction(() => {
    for (let version = current; version < SQLITE_MIGRATIONS.length; version++) {
      db.exec(SQLITE_MIGRATIONS[version]!);
      db.pragma(`user_version = ${version + 1}`);
    }
  });
  apply();
}
