import { execFileSync, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import {
  chmodSync,
  chownSync,
  existsSync,
  mkdtempSync,
  readFileSync,
  readdirSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';

/**
 * A real Postgres for the tests: Debian's `postgresql` package, a cluster made in a temporary folder, started on
 * a free loopback port with a random password, and removed at the end. Postgres refuses to run as root: as root,
 * the cluster is the `postgres` user's (the package makes that user).
 */
export interface PostgresCluster {
  /** The cluster's URL for a database (the password in it, as `serve --db` takes it). */
  url(database: string): string;
  /** A new, empty database; returns its URL. */
  createDatabase(): Promise<string>;
  dropDatabase(url: string): Promise<void>;
  /** Stops the server at once (as a crash would) and starts it again on the same port and data. */
  restart(): void;
  /** Stops the cluster at once and removes its folder. */
  stop(): void;
}

/** The newest installed server's programs, or null when the package is not installed. */
export function postgresBin(): string | null {
  const root = '/usr/lib/postgresql';
  if (!existsSync(root)) return null;
  const versions = readdirSync(root)
    .filter((name) => /^\d+$/.test(name) && existsSync(join(root, name, 'bin/initdb')))
    .sort((a, b) => Number(b) - Number(a));
  return versions.length === 0 ? null : join(root, versions[0]!, 'bin');
}

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => resolve(typeof address === 'object' && address ? address.port : 0));
    });
  });
}

/**
 * How many ports a start tries. The port is free when it is chosen but the cluster takes it only after initdb (1-2 s
 * on the loaded CI machine), and any test's server listening on port 0 meanwhile may be given it: pg_ctl then says
 * only "could not start server" (CI failed so once, in revocation.test.ts).
 */
const PORT_TRIES = 5;

/** `port` is the first port tried (the test of a taken port sets it); a free one otherwise. */
export async function startPostgresCluster(options: { port?: number } = {}): Promise<PostgresCluster> {
  const bin = postgresBin();
  if (bin === null)
    throw new Error('Postgres is not installed: apt-get install postgresql (the CI script does it first)');
  const dir = mkdtempSync(join(tmpdir(), 'flowsync-pg-'));
  const data = join(dir, 'data');
  const password = randomBytes(18).toString('base64url');
  const pwfile = join(dir, 'password');
  writeFileSync(pwfile, `${password}\n`, { mode: 0o600 });
  const asRoot = process.getuid?.() === 0;
  if (asRoot) {
    const uid = Number(execFileSync('id', ['-u', 'postgres'], { encoding: 'utf8' }).trim());
    const gid = Number(execFileSync('id', ['-g', 'postgres'], { encoding: 'utf8' }).trim());
    chmodSync(dir, 0o700);
    chownSync(dir, uid, gid);
    chownSync(pwfile, uid, gid);
  }
  const serverLog = join(dir, 'server.log');
  const run = (program: string, args: string[]) => {
    const command = asRoot ? 'runuser' : join(bin, program);
    const argv = asRoot ? ['-u', 'postgres', '--', join(bin, program), ...args] : args;
    const result = spawnSync(command, argv, { encoding: 'utf8', cwd: dir });
    if (result.status !== 0)
      throw new Error(
        `${program} failed (${result.status}): ${result.stderr || result.stdout}${logTail(serverLog)}`,
      );
  };
  let port = options.port ?? (await freePort());
  run('initdb', [
    '-D',
    data,
    '-U',
    'flowsync',
    `--pwfile=${pwfile}`,
    '--auth=scram-sha-256',
    '-E',
    'UTF8',
    '--no-locale',
    '--no-sync',
  ]);
  const url = (database: string) =>
    `postgres://flowsync:${encodeURIComponent(password)}@127.0.0.1:${port}/${database}`;
  const start = () =>
    run('pg_ctl', [
      '-D',
      data,
      '-l',
      serverLog,
      '-w',
      '-o',
      // fsync off: a test cluster needs no durability against the machine crashing, and it makes each commit cheap.
      `-c listen_addresses=127.0.0.1 -p ${port} -c unix_socket_directories=${dir} -c fsync=off -c max_connections=200`,
      'start',
    ]);
  for (let tries = 1; ; tries++) {
    // The log grows across tries: only what this try wrote says why it failed.
    const before = existsSync(serverLog) ? statSync(serverLog).size : 0;
    try {
      start();
      break;
    } catch (error) {
      const said = existsSync(serverLog) ? readFileSync(serverLog).subarray(before).toString('utf8') : '';
      if (tries === PORT_TRIES || !/could not bind|Address already in use/i.test(said)) throw error;
      port = await freePort();
    }
  }
  return {
    url,
    restart: () => {
      run('pg_ctl', ['-D', data, '-m', 'immediate', 'stop']);
      start();
    },
    createDatabase: () => createDatabase(url('postgres')),
    dropDatabase: (databaseUrl) => dropDatabase(url('postgres'), databaseUrl),
    stop: () => {
      try {
        run('pg_ctl', ['-D', data, '-m', 'immediate', 'stop']);
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    },
  };
}

/** The server log's last lines, for an error: pg_ctl itself says only "Examine the log output". */
function logTail(file: string): string {
  if (!existsSync(file)) return '';
  const lines = readFileSync(file, 'utf8').trimEnd().split('\n').slice(-8);
  return `\nserver.log:\n${lines.join('\n')}`;
}

async function asAdmin<T>(adminUrl: string, work: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: adminUrl });
  await client.connect();
  try {
    return await work(client);
  } finally {
    await client.end();
  }
}

/** A new, empty database in the cluster of `adminUrl` (its maintenance database); returns the new one's URL. */
export async function createDatabase(adminUrl: string): Promise<string> {
  const name = `flowsync_${randomBytes(6).toString('hex')}`;
  await asAdmin(adminUrl, (client) => client.query(`CREATE DATABASE ${name}`));
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  return url.toString();
}

export async function dropDatabase(adminUrl: string, databaseUrl: string): Promise<void> {
  const name = new URL(databaseUrl).pathname.slice(1);
  await asAdmin(adminUrl, (client) => client.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`));
}

/** A value as a SQL literal, for the tests' synchronous reads (values come from the tests themselves). */
function literal(value: unknown): string {
  if (value === null || value === undefined) return 'NULL';
  if (typeof value === 'number' || typeof value === 'bigint') return String(value);
  if (typeof value === 'boolean') return value ? '1' : '0';
  return `'${String(value).replaceAll("'", "''")}'`;
}

/** Runs statements on a Postgres database, synchronously (through `psql`). */
export function execPostgres(databaseUrl: string, sql: string): void {
  execFileSync('psql', [databaseUrl, '-X', '-q', '-v', 'ON_ERROR_STOP=1', '-c', sql], { encoding: 'utf8' });
}

/**
 * A read-only query on a service's Postgres database, synchronous as the SQLite reader is (through `psql`): the
 * rows as JSON objects, numbers as numbers.
 */
export function readPostgres(databaseUrl: string) {
  return <T = Record<string, unknown>>(sql: string, ...params: unknown[]): T[] => {
    let n = 0;
    const bound = sql.replace(/\?/g, () => literal(params[n++]));
    const out = execFileSync(
      'psql',
      [
        databaseUrl,
        '-X',
        '-q',
        '-A',
        '-t',
        '-v',
        'ON_ERROR_STOP=1',
        '-c',
        `SELECT coalesce(json_agg(row_to_json(t)), '[]'::json) FROM (${bound}) t`,
      ],
      { encoding: 'utf8' },
    );
    return JSON.parse(out) as T[];
  };
}
