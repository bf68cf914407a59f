import { execFileSync } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import { SQLITE_MIGRATIONS } from '../../src/service/db/migrations.ts';
import { callFunction, readDatabase } from '../support/service.ts';
import { startServeProcess, type ServeProcess } from '../support/serve-process.ts';

/**
 * What is SQLite's alone, out of the Postgres pass (vitest.config.ts): a SQLite file of an older schema, and one
 * whose disk fills up under the running service.
 */
const sha = (text: string) => createHash('sha256').update(text).digest('hex');

let dir: string;
let serve: ServeProcess | undefined;
let read: ReturnType<typeof readDatabase>;
let mounted: string | undefined;

afterEach(async () => {
  await serve?.stop();
  serve = undefined;
  if (mounted) execFileSync('umount', [mounted]);
  mounted = undefined;
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

describe('a database whose disk is full', () => {
  /** One sync_batch of one file, sent once, as the service answers it. */
  const writeFile = (url: string, token: string, path: string, content: string) =>
    callFunction(url, `Bearer ${token}`, 'svc/flow_def/action/sync_batch/run', {
      repo_owner: 'acme',
      repo_name: 'app',
      flows: [{ flow_path: 'flows/ci', files: [{ path, content, hash: sha(content) }] }],
    });

  it('answers 503 (send it again later) and says why in its log, never an incident; takes writes once there is room', async () => {
    dir = mkdtempSync(join(tmpdir(), 'flowsync-full-'));
    const disk = join(dir, 'disk');
    mkdirSync(disk);
    execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=4m,mode=0700', 'tmpfs', disk]);
    mounted = disk;
    const log = join(dir, 'serve.log');
    serve = await startServeProcess(join(disk, 'service.db'), log);
    const { url } = serve;
    const token = serve.tokens.user;
    expect((await writeFile(url, token, 'before.yml', 'before\n')).statusCode).toBe(200);

    // Everything but the last few blocks taken by another program's file.
    const filler = join(disk, 'filler');
    const chunk = Buffer.alloc(64 * 1024, 1);
    for (let i = 0; ; i++) {
      try {
        writeFileSync(join(disk, `filler-${i}`), chunk);
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== 'ENOSPC') throw error;
        break;
      }
    }
    // 512 KiB of content does not fit in what is left: SQLite's write fails with SQLITE_FULL.
    const big = randomBytes(384 * 1024).toString('base64');
    const full = await writeFile(url, token, 'big.yml', big);
    expect(full.statusCode).toBe(503);
    expect(full.headers['retry-after']).toMatch(/^\d+$/);
    expect(full.body).toEqual(
      expect.objectContaining({
        errorMessage: expect.stringContaining("The service's database cannot take this call now"),
        errorData: { reason: 'unavailable' },
      }),
    );
    // The log is written a moment after the answer.
    await expect
      .poll(() => readFileSync(log, 'utf8'))
      .toContain(`${disk} is full: free some space on its disk.`);
    expect(readFileSync(log, 'utf8')).not.toContain('incident');

    // Room again: the same call is taken, and nothing written before was lost.
    execFileSync('sh', ['-c', `rm -f ${filler}-*`]);
    expect((await writeFile(url, token, 'big.yml', big)).statusCode).toBe(200);
    read = readDatabase(join(disk, 'service.db'));
    expect(read('SELECT path FROM flow_files ORDER BY path')).toEqual([
      { path: 'before.yml' },
      { path: 'big.yml' },
    ]);
  });
});
