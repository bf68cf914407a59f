/**
 * What `npm ci` does before anything is installed: the project's .npmrc and package.json, in a copy of the
 * checkout's install files, run by the real npm.
 */
import { spawnSync } from 'node:child_process';
import { copyFileSync, cpSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const HEADERS = join(ROOT, 'scripts', 'flowsync-node-headers', 'headers.mjs');

let work: string | undefined;
afterEach(() => {
  if (work) rmSync(work, { recursive: true, force: true });
  work = undefined;
});

/** The install files of the checkout, copied; `engines` of package.json replaced when given. */
function installFiles(engines?: string): string {
  work = mkdtempSync(join(tmpdir(), 'flowsync-install-'));
  for (const file of ['package-lock.json', '.npmrc']) copyFileSync(join(ROOT, file), join(work, file));
  const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { engines: { node: string } };
  if (engines) pkg.engines.node = engines;
  writeFileSync(join(work, 'package.json'), JSON.stringify(pkg, null, 2));
  return work;
}

describe('npm ci on a Node the project does not support', () => {
  it('is refused before anything is installed, with the versions it needs', () => {
    // The Node running the tests stands for an unsupported one: the range is made to exclude it (npm 11 has no
    // setting to pretend another version). On Node 20 with the real range, the same refusal was checked by hand.
    const major = Number(process.versions.node.split('.')[0]);
    const folder = installFiles(`>=${major + 1}`);
    const run = spawnSync('npm', ['ci', '--offline', '--no-audit', '--no-fund'], {
      cwd: folder,
      encoding: 'utf8',
      timeout: 60_000,
    });
    expect(run.status).not.toBe(0);
    // An error, not the warning npm prints without engine-strict before it installs anyway.
    expect(run.stderr).toContain('npm error code EBADENGINE');
    expect(run.stderr).toContain(`Required: {"node":">=${major + 1}"}`);
    expect(existsSync(join(folder, 'node_modules'))).toBe(false);
  });
});

describe("node-gyp's headers for keytar's build", () => {
  const headers = (env: NodeJS.ProcessEnv) =>
    spawnSync(process.execPath, [HEADERS], { env: { PATH: process.env.PATH, ...env }, encoding: 'utf8' });

  it("are this Node's own, put where node-gyp looks, so the install downloads none", () => {
    const prefix = join(process.execPath, '..', '..');
    if (!existsSync(join(prefix, 'include', 'node', 'node_version.h')))
      throw new Error(
        `this Node (${process.execPath}) has no headers beside it; the tests run on one that does`,
      );
    work = mkdtempSync(join(tmpdir(), 'flowsync-gyp-'));
    const run = headers({ npm_config_devdir: work, HOME: work });
    expect(run.status).toBe(0);
    const version = join(work, process.versions.node);
    expect(readFileSync(join(version, 'installVersion'), 'utf8').trim()).toBe('11');
    expect(readFileSync(join(version, 'include', 'node', 'node_version.h'), 'utf8')).toContain(
      `#define NODE_MAJOR_VERSION ${process.versions.node.split('.')[0]}`,
    );
    // node-gyp's check of a cached version: common.gypi under include/node.
    expect(existsSync(join(version, 'include', 'node', 'common.gypi'))).toBe(true);
  });

  it("leave a user's nodedir and node-gyp's own cache as they are", () => {
    work = mkdtempSync(join(tmpdir(), 'flowsync-gyp-'));
    const chosen = headers({ npm_config_devdir: work, npm_config_nodedir: '/opt/node', HOME: work });
    expect(chosen.stdout).toContain('nodedir is set (/opt/node)');
    expect(existsSync(join(work, process.versions.node))).toBe(false);

    const cached = join(work, process.versions.node);
    cpSync(join(ROOT, 'scripts', 'flowsync-node-headers'), join(cached, 'unrelated'), { recursive: true });
    writeFileSync(join(cached, 'installVersion'), '11\n');
    const again = headers({ npm_config_devdir: work, HOME: work });
    expect(again.stdout).toContain(`node-gyp's cache has Node ${process.versions.node}`);
    expect(existsSync(join(cached, 'include'))).toBe(false);
  });
});
