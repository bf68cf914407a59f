import envPaths from 'env-paths';
import { mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { cacheFolder } from '../../src/cli/compile-cache.ts';
import { userEnv } from '../support/agent-process.ts';
import { runFlowsync } from '../support/cli.ts';

describe('the cache folder', () => {
  it("is env-paths' cache folder for flowsync on this machine", () => {
    expect(cacheFolder()).toBe(envPaths('flowsync', { suffix: '' }).cache);
  });

  const rows: { what: string; platform: NodeJS.Platform; env: NodeJS.ProcessEnv; folder: string }[] = [
    { what: 'Linux, XDG_CACHE_HOME unset', platform: 'linux', env: {}, folder: '/home/u/.cache/flowsync' },
    {
      what: 'Linux, XDG_CACHE_HOME set',
      platform: 'linux',
      env: { XDG_CACHE_HOME: '/x' },
      folder: '/x/flowsync',
    },
    { what: 'macOS', platform: 'darwin', env: {}, folder: '/home/u/Library/Caches/flowsync' },
    {
      what: 'Windows, LOCALAPPDATA unset',
      platform: 'win32',
      env: {},
      folder: join('/home/u', 'AppData', 'Local', 'flowsync', 'Cache'),
    },
    {
      what: 'Windows, LOCALAPPDATA set',
      platform: 'win32',
      env: { LOCALAPPDATA: '/l' },
      folder: join('/l', 'flowsync', 'Cache'),
    },
  ];
  for (const row of rows)
    it(row.what, () => expect(cacheFolder(row.platform, row.env, '/home/u')).toBe(row.folder));
});

describe('the compile cache', () => {
  let home: string;
  afterEach(() => rmSync(home, { recursive: true, force: true }));

  it("is kept in the user's own cache folder, which no other user may enter", async () => {
    home = mkdtempSync(join(tmpdir(), 'flowsync-compile-cache-'));
    const env = { ...userEnv(home), XDG_CACHE_HOME: join(home, '.cache'), NODE_COMPILE_CACHE: '' };
    expect((await runFlowsync(['status'], { env })).code).toBe(0);
    const folder = join(home, '.cache', 'flowsync', 'compile-cache');
    expect(statSync(folder).mode & 0o777).toBe(0o700);
    // One folder per Node version, holding the modules `status` compiled.
    const [version] = readdirSync(folder);
    expect(readdirSync(join(folder, version!)).length).toBeGreaterThan(5);
  });
});
