/**
 * The tests' Postgres comes up even when its port is taken between being chosen and the server's start: the port
 * is chosen free, initdb runs for a second or two, and a test server listening on port 0 meanwhile may be given
 * it (CI failed once so: "pg_ctl: could not start server"). The start moves to another free port.
 */
import { createServer, type Server } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { startPostgresCluster, type PostgresCluster } from './postgres.ts';
import pg from 'pg';

let cluster: PostgresCluster | undefined;
let taken: Server | undefined;
afterEach(async () => {
  cluster?.stop();
  cluster = undefined;
  await new Promise<void>((resolve) => (taken ? taken.close(() => resolve()) : resolve()));
  taken = undefined;
});

describe('the tests’ Postgres cluster', () => {
  it('starts on another port when the one it chose is taken before the server listens', async () => {
    taken = createServer();
    const port = await new Promise<number>((resolve) =>
      taken!.listen(0, '127.0.0.1', () => resolve((taken!.address() as { port: number }).port)),
    );
    cluster = await startPostgresCluster({ port });
    const url = new URL(cluster.url('postgres'));
    expect(Number(url.port)).not.toBe(port);
    const client = new pg.Client({ connectionString: url.toString() });
    await client.connect();
    try {
      const { rows } = await client.query<{ one: number }>('SELECT 1 AS one');
      expect(rows).toEqual([{ one: 1 }]);
    } finally {
      await client.end();
    }
  }, 60_000);
});
