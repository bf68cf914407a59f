import { chmodSync, mkdirSync, mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { inPrivateFolder, MAX_SOCKET_PATH, privateSocketPlace } from '../../src/host/index.ts';

/** Where a private socket goes: the data folder when its path fits a socket's, else a 0700 folder made for it. */
let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'fs-sock-'));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

/** A folder whose own path is `length` bytes long, made 0700. */
function folderOf(length: number): string {
  const folder = join(dir, 'x'.repeat(length - dir.length - 1));
  mkdirSync(folder, { recursive: true, mode: 0o700 });
  return folder;
}

describe('privateSocketPlace', () => {
  const rows: {
    what: string;
    data: number;
    elsewhere: (folder: () => string) => (string | undefined)[];
    lands: 'data' | 'first' | 'second' | null;
  }[] = [
    { what: 'a data folder short enough: in it', data: 60, elsewhere: () => ['/tmp'], lands: 'data' },
    {
      what: 'the longest path that fits: in the data folder',
      data: MAX_SOCKET_PATH - '/agent.sock'.length,
      elsewhere: () => ['/tmp'],
      lands: 'data',
    },
    {
      what: 'one byte more: in a folder of its own in $XDG_RUNTIME_DIR',
      data: MAX_SOCKET_PATH - '/agent.sock'.length + 1,
      elsewhere: (folder) => [folder(), '/tmp'],
      lands: 'first',
    },
    {
      what: 'no $XDG_RUNTIME_DIR: in /tmp',
      data: 150,
      elsewhere: () => [undefined, '/tmp'],
      lands: 'second',
    },
    {
      what: '$XDG_RUNTIME_DIR itself too long: in /tmp',
      data: 150,
      elsewhere: () => [folderOf(95), '/tmp'],
      lands: 'second',
    },
    {
      what: '$XDG_RUNTIME_DIR not there: in /tmp',
      data: 150,
      elsewhere: () => [join(dir, 'missing'), '/tmp'],
      lands: 'second',
    },
    {
      what: 'nowhere it fits: none (start and doctor say so)',
      data: 150,
      elsewhere: () => [folderOf(95)],
      lands: null,
    },
  ];
  it.each(rows)('$what', ({ data, elsewhere, lands }) => {
    const dataFolder = folderOf(data);
    const runtime = join(dir, 'run');
    mkdirSync(runtime, { recursive: true, mode: 0o700 });
    const bases = elsewhere(() => runtime);
    const place = privateSocketPlace(dataFolder, 'agent.sock', bases);
    if (lands === null) return expect(place).toBeNull();
    expect(Buffer.byteLength(place!.path)).toBeLessThanOrEqual(MAX_SOCKET_PATH);
    if (lands === 'data') expect(place!.path).toBe(join(dataFolder, 'agent.sock'));
    else {
      const base = lands === 'first' ? bases[0]! : bases[1]!;
      expect(dirname(dirname(place!.path))).toBe(base);
      expect(place!.path).toMatch(/\/flowsync-\w{6}\/agent\.sock$/);
      expect(statSync(dirname(place!.path)).mode & 0o777).toBe(0o700);
      expect(inPrivateFolder(place!.path)).toBe(true);
    }
    place!.remove();
    if (lands !== 'data') expect(statSync(dirname(place!.path), { throwIfNoEntry: false })).toBeUndefined();
  });
});

describe('inPrivateFolder', () => {
  it('is true for a folder of this user with no group or other bits, false otherwise', () => {
    const folder = join(dir, 'private');
    mkdirSync(folder, { mode: 0o700 });
    expect(inPrivateFolder(join(folder, 'agent.sock'))).toBe(true);
    for (const mode of [0o750, 0o705, 0o755, 0o777]) {
      const loose = join(dir, mode.toString(8));
      mkdirSync(loose);
      // mkdir's mode goes through the umask: set it as it is meant.
      chmodSync(loose, mode);
      expect(inPrivateFolder(join(loose, 'agent.sock')), mode.toString(8)).toBe(false);
    }
    expect(inPrivateFolder(join(dir, 'missing', 'agent.sock'))).toBe(false);
  });
});
