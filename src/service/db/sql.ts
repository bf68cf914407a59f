/**
 * The one interface the service's stores write to, with two implementations: SQLite (better-sqlite3, one process,
 * the default) and Postgres (`pg`, any number of service processes on one database). The stores' SQL is written
 * once, in the subset both speak, with `?` or `@name` parameters; what differs (the schema, full-text search) is
 * chosen by `dialect` where it is used.
 */

import { DatabaseProblem } from '../errors.ts';

export type Dialect = 'sqlite' | 'postgres';

/** `?` parameters in order, or `@name` parameters by name. Booleans are sent as 1 or 0 (SQLite has no boolean). */
export type Params = readonly unknown[] | Readonly<Record<string, unknown>>;

/** Statements, inside a transaction or not. */
export interface Sql {
  readonly dialect: Dialect;
  all<T>(text: string, params?: Params): Promise<T[]>;
  get<T>(text: string, params?: Params): Promise<T | undefined>;
  /** Returns how many rows the statement changed. */
  run(text: string, params?: Params): Promise<number>;
  /**
   * Holds `key` until the transaction ends: another process's transaction that asks for it waits. How writers of
   * one flow take turns on Postgres, so that each reads the hashes the last one wrote (the base-hash rule). SQLite
   * has one writer at a time already: nothing to do.
   */
  lock(key: string): Promise<void>;
  /**
   * Tells every listener of `channel` (ServiceDatabase.listen), in this process and in any other on the same
   * database, once the transaction commits; nothing when it rolls back. Outside a transaction, at once. A poke, not a
   * message: listeners read what changed from the database, so a notification lost (a listener reconnecting) costs
   * only the time to the next one or to the listener's own look.
   */
  notify(channel: string): Promise<void>;
}

/** What `listen` tells its listener besides each notification: whether other processes' are heard now. */
export interface Listening {
  /**
   * False while notifications of other processes may be missed (Postgres: the listening connection is down and
   * being opened again); true again once they are heard, and the listener is poked then, to catch up.
   */
  readonly heard: boolean;
  stop(): void;
}

export interface ServiceDatabase {
  readonly dialect: Dialect;
  /**
   * One call's work, atomic: committed whole, or nothing when it throws. On Postgres it is run again (from the
   * start) after a deadlock or a row another process inserted first, so `work` must not have effects outside the
   * database before it returns.
   */
  transaction<T>(work: (sql: Sql) => Promise<T>): Promise<T>;
  /** Reads that need no transaction (one statement, or statements whose rows need not agree). */
  read<T>(work: (sql: Sql) => Promise<T>): Promise<T>;
  /**
   * Reads whose rows must agree (`flowsync service export`): one read-only transaction, so every statement sees the
   * database as it was when the first one ran, whatever other processes commit meanwhile. It takes no write lock:
   * a `flowsync serve` on the same SQLite file (WAL) or Postgres database goes on writing.
   */
  snapshot<T>(work: (sql: Sql) => Promise<T>): Promise<T>;
  /**
   * Calls `onNotify` after every committed transaction that notified `channel` (Sql.notify), of this process or,
   * on Postgres, of any process on the database (LISTEN/NOTIFY). Several notifications may come as one call.
   */
  listen(channel: string, onNotify: () => void): Listening;
  /** Where it is, for the log: a file path, or a Postgres URL without its password. */
  readonly location: string;
  close(): Promise<void>;
}

/** A location that names a Postgres database rather than a SQLite file. */
export function isPostgresUrl(location: string): boolean {
  return /^postgres(ql)?:\/\//i.test(location);
}

/**
 * The statement as Postgres takes it: `?` and `@name` become `$1`, `$2`, … (a name used twice is one parameter),
 * with the values in that order. The stores' SQL has neither character inside a string literal. A text's numbering
 * is worked out once and kept (the stores' texts are a few hundred, the same strings each time: db/rows.ts).
 */
export function toNumbered(text: string, params: Params | undefined): { text: string; values: unknown[] } {
  if (params === undefined) return { text, values: [] };
  const positional = Array.isArray(params);
  let numbered = NUMBERED.get(text);
  if (numbered === undefined || (numbered.names === null) !== positional) {
    numbered = positional ? numberMarks(text) : numberNames(text);
    if (NUMBERED.size >= MAX_NUMBERED) NUMBERED.clear();
    NUMBERED.set(text, numbered);
  }
  if (positional) return { text: numbered.text, values: [...(params as unknown[])] };
  const named = params as Readonly<Record<string, unknown>>;
  return {
    text: numbered.text,
    values: numbered.names!.map((name) => {
      if (!(name in named)) throw new Error(`no value for @${name}`);
      return named[name];
    }),
  };
}

/** Texts whose numbering is kept; past this many (never, with the stores' SQL) the cache starts again. */
const MAX_NUMBERED = 2_000;
const NUMBERED = new Map<string, { text: string; names: string[] | null }>();

function numberMarks(text: string) {
  let n = 0;
  return { text: text.replace(/\?/g, () => `$${++n}`), names: null };
}

function numberNames(text: string) {
  const order = new Map<string, number>();
  const numbered = text.replace(/@([A-Za-z_][A-Za-z0-9_]*)/g, (_match, name: string) => {
    let index = order.get(name);
    if (index === undefined) order.set(name, (index = order.size + 1));
    return `$${index}`;
  });
  return { text: numbered, names: [...order.keys()] };
}

/** A Postgres URL as a log may show it: no password, no query (which may carry one). */
export function redactedLocation(location: string): string {
  if (!isPostgresUrl(location)) return location;
  try {
    const url = new URL(location);
    if (url.password) url.password = '***';
    url.search = '';
    return url.toString();
  } catch {
    return 'postgres://…';
  }
}

/**
 * How far opening a database may bring its schema: `migrate` (`flowsync serve`: any older schema); `create` (an
 * import: the schema of a new, empty database, never an older one, which some older `serve` may be running on);
 * `none` (an export: it reads the schema this flowsync knows, and writes nothing).
 */
export type SchemaUpdate = 'migrate' | 'create' | 'none';

/**
 * Whether to run the migrations from schema `current` (0: none yet) to `latest`; a schema that may not be brought
 * there is refused in one line.
 */
export function shouldMigrate(
  current: number,
  latest: number,
  update: SchemaUpdate,
  location: string,
): boolean {
  if (current > latest) {
    throw new DatabaseProblem(
      `The database was written by a newer flowsync (schema ${current}, this one knows ${latest}): upgrade flowsync.`,
      'refused',
    );
  }
  if (current === latest) return false;
  if (update === 'migrate' || (update === 'create' && current === 0)) return true;
  if (current === 0) {
    throw new DatabaseProblem(
      `${location} holds no flowsync service: give --db the database \`flowsync serve\` uses.`,
      'refused',
    );
  }
  throw new DatabaseProblem(
    `${location} is at schema ${current} and this flowsync reads ${latest}: run this flowsync's \`serve\` on it once (it brings the schema up to date), then try again.`,
    'refused',
  );
}

/**
 * `text` (a message that may quote the URL) with the password of a Postgres URL spelled out nowhere, as typed or
 * percent-decoded: what redactedLocation does for the URL itself.
 */
export function withoutPassword(text: string, location: string): string {
  if (!isPostgresUrl(location)) return text;
  let password = '';
  try {
    password = new URL(location).password;
  } catch {
    return text;
  }
  if (password === '') return text;
  let decoded = password;
  try {
    decoded = decodeURIComponent(password);
  } catch {
    // Not valid percent-encoding: only the typed form can appear.
  }
  return [password, decoded].reduce((said, secret) => said.split(secret).join('***'), text);
}
