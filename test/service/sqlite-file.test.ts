import { createHash } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import { SQLITE_MIGRATIONS } from '../../src/service/db/migrations.ts';
import { readDatabase } from '../support/service.ts';
import { startServeProcess, type ServeProcess } from '../support/serve-process.ts';

/** What is SQLite's alone, out of the Postgres pass (vitest.config.ts): a SQLite file of an older schema. */
const sha = (text: string) => createHash('sha256').update(text).digest('hex');

let dir: string;
let serve: ServeProcess | undefined;
let read: ReturnType<typeof readDatabase>;

afterEach(async () => {
  await serve?.stop();
  rmSync(dir, { recursive: true, force: true });
});

describe('a database from before history', () => {
  it('gets every current file as its first version when the service starts on it', async () => {
    dir = mkdtempSync(join(tmpdir(), 'flowsync-history-'));
    const dbPath = join(dir, 'service.db');
    // A database as the last release left it: schema 1, one flow with two files.
    const old = new Database(dbPath);
    old.exec(SQLITE_MIGRATIONS[0]!);
    old.pragma('user_version = 1');
    old.prepare("INSERT INTO repos VALUES ('r1', 'acme', 'app', '2026-01-01T00:00:00.000Z')").run();
    old
      .prepare(
        "INSERT INTO flows VALUES ('f1', 'r1', 'flows/ci', 'h', '2026-01-01T00:00:00.000Z', '2026-01-01T00:00:00.000Z')",
      )
      .run();
    for (const [id, path, content] of [
      ['a', 'a.yml', 'a\n'],
      ['b', 'b.yml', 'b\n'],
    ] as const)
      old
        .prepare('INSERT INTO flow_files VALUES (?, ?, ?, ?, ?, ?, ?, ?)')
        .run(
          id,
          'f1',
          path,
          sha(content),
          content,
          2,
          '2026-01-02T00:00:00.000Z',
          '2026-01-02T00:00:00.000Z',
        );
    old.close();
    serve = await startServeProcess(dbPath, join(dir, 'serve.log'));
    read = readDatabase(dbPath);
    expect(
      read('SELECT flow_path, path, hash, written_at, replaced_at FROM file_versions ORDER BY path'),
    ).toEqual([
      {
        flow_path: 'flows/ci',
        path: 'a.yml',
        hash: sha('a\n'),
        written_at: '2026-01-02T00:00:00.000Z',
        replaced_at: null,
      },
      {
        flow_path: 'flows/ci',
        path: 'b.yml',
        hash: sha('b\n'),
        written_at: '2026-01-02T00:00:00.000Z',
        replaced_at: null,
      },
    ]);
  });
});
