import {
  closeSync,
  existsSync,
  mkdtempSync,
  openSync,
  readdirSync,
  rmSync,
  statSync,
  writeSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openSyncState } from '../../src/sync/index.ts';

let dir: string;
let path: string;

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'flowsync-state-'));
  path = join(dir, 'state.db');
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

/** A state with enough files to span many pages, closed with everything in the main file. */
function fillState(): void {
  const { state } = openSyncState(path);
  // Raw SQL: this is about the file, not the state's API.
  const { id: repoId } = state.db
    .prepare(
      `INSERT INTO repos (root, service, owner, name) VALUES ('/r', 'embedded', 'a', 'b') RETURNING id`,
    )
    .get() as { id: number };
  state.db.transaction(() => {
    const insert = state.db.prepare(
      'INSERT INTO files (repo_id, flow_path, path, local_hash) VALUES (?, ?, ?, ?)',
    );
    for (let i = 0; i < 2000; i++) insert.run(repoId, `flows/f${i % 20}`, `file-${i}.yaml`, 'a'.repeat(64));
  })();
  state.db.pragma('wal_checkpoint(TRUNCATE)');
  state.close();
}

function overwrite(offset: number, bytes: Buffer): void {
  const fd = openSync(path, 'r+');
  writeSync(fd, bytes, 0, bytes.length, offset);
  closeSync(fd);
}

describe('opening the state file', () => {
  it('keeps a sound file', () => {
    fillState();
    const { state, setAside } = openSyncState(path);
    expect(setAside).toBeNull();
    expect(state.repos()).toHaveLength(1);
    state.close();
  });

  it('moves aside a file damaged past its first page, which opens and reads its header fine', () => {
    fillState();
    const pages = statSync(path).size / 4096;
    expect(pages).toBeGreaterThan(10);
    // A page in the middle of the files table: only a walk over the pages finds it.
    overwrite(Math.floor(pages / 2) * 4096, Buffer.alloc(4096, 0xab));
    const { state, setAside, damage } = openSyncState(path);
    expect(damage).not.toBeNull();
    expect(setAside).toMatch(/state\.db\.corrupt-[\dTZ-]+$/);
    expect(existsSync(setAside!)).toBe(true);
    expect(state.repos()).toEqual([]);
    state.close();
    expect(readdirSync(dir).filter((name) => name.includes('corrupt'))).toHaveLength(1);
  });
});
