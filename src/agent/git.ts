import { execFile } from 'node:child_process';
import { lstatSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { readContained } from '../sync/index.ts';

const run = promisify(execFile);

/**
 * One `git config --get` in a repository (its own config, then the user's and the system's, as git reads them):
 * the value, trimmed, or null when it is unset or empty, the folder is not a repository, or git is not installed.
 * Every git read of flowsync goes through here, one small function per thing read.
 */
export async function gitConfig(root: string, key: string): Promise<string | null> {
  try {
    const { stdout } = await run('git', ['-C', root, 'config', '--get', key]);
    return stdout.trim() || null;
  } catch {
    return null;
  }
}

/**
 * The URL of the repository's `origin` remote, or null. Not asked of git for a folder in no repository: git would
 * read the user's and the system's config alone there, which name no origin of it, and `flowsync status` asks at
 * each run, where the process cost 20-60 ms of its CPU.
 */
export function remoteUrl(root: string): Promise<string | null> {
  return findGitDir(root) === null ? Promise.resolve(null) : gitConfig(root, 'remote.origin.url');
}

/** The email git would sign a commit in this repository with, or null. */
export function userEmail(root: string): Promise<string | null> {
  return gitConfig(root, 'user.email');
}

/**
 * The email in the user's own git config (`~/.gitconfig`, `$XDG_CONFIG_HOME/git/config`, or `$GIT_CONFIG_GLOBAL`),
 * never a repository's: `git config --global` reads only the user's files, which git itself trusts, and a config
 * read runs no code (no hook, no filter, no fsmonitor), so nothing of a cloned repository is run or believed. Asked of
 * git rather than parsed here, because git's format (includes, quoting, the XDG location, case) is git's to read: a
 * second parser would disagree with it somewhere. Run from `/`, so that no repository is even looked for. This is
 * who the user is in the tracker (their personal API key is registered to the tracker user of this email); null
 * when it is unset or git is not installed.
 */
export async function globalUserEmail(): Promise<string | null> {
  try {
    const { stdout } = await run('git', ['config', '--global', '--get', 'user.email'], { cwd: '/' });
    return stdout.trim() || null;
  } catch {
    return null;
  }
}

/**
 * The folder git keeps a checkout's objects and refs in, as a real path: the same for a repository and each of its
 * worktrees (`git worktree add`), another for a second clone. Null when the folder is not a git repository.
 */
export async function gitCommonDir(root: string): Promise<string | null> {
  try {
    const { stdout } = await run('git', [
      '-C',
      root,
      'rev-parse',
      '--path-format=absolute',
      '--git-common-dir',
    ]);
    return stdout.trim() || null;
  } catch {
    return null;
  }
}

/**
 * The branch a checkout is on, as git's HEAD says: `main`, `feat/x`, `detached at 1a2b3c4`; null when the folder is
 * in no git repository (or its HEAD cannot be read). Read from the HEAD file, not by running git: it is asked at
 * each round and each status, where `git symbolic-ref --short HEAD` costs a process (18 ms on the 2-core build machine at load 11)
 * and this read 0.02 ms. The repository is found as git finds it, the nearest `.git` up from the folder; a worktree's (or a
 * submodule's) `.git` is a file that names its git folder, which holds its own HEAD.
 */
export function currentBranch(root: string): string | null {
  const gitDir = findGitDir(root);
  if (gitDir === null) return null;
  const head = smallText(gitDir, 'HEAD')?.trim();
  if (head === undefined) return null;
  const ref = /^ref:\s*(\S+)$/.exec(head)?.[1];
  if (ref !== undefined) return ref.startsWith('refs/heads/') ? ref.slice('refs/heads/'.length) : ref;
  return /^[0-9a-f]{40,64}$/.test(head) ? `detached at ${head.slice(0, 7)}` : null;
}

/** The folder a checkout's `.git` is in (its top level, as git's porcelain paths are relative to it); null: none. */
export function gitTopLevel(folder: string): string | null {
  for (let dir = resolve(folder); ; dir = dirname(dir)) {
    try {
      lstatSync(join(dir, '.git'));
      return dir;
    } catch {
      if (dirname(dir) === dir) return null;
    }
  }
}

/**
 * The git folder of the repository `folder` is in: a real `.git` folder, or where a `.git` file points; null when
 * none. Read by the containment rule (readContained), as every file of a repository: a `.git` or `HEAD` that is a
 * link, a FIFO or a device (a tarball's `.git` linked to /dev/zero, which a plain read would fill memory from, or
 * a FIFO it would wait on for ever) is no git folder, and at most 4 KiB of either is read.
 */
export function findGitDir(folder: string): string | null {
  for (let dir = resolve(folder); ; dir = dirname(dir)) {
    const dotGit = join(dir, '.git');
    let entry: ReturnType<typeof lstatSync> | undefined;
    try {
      entry = lstatSync(dotGit);
    } catch {
      // No .git here: the folder above, up to the root of the file system.
    }
    if (entry?.isDirectory()) return dotGit;
    if (entry) {
      const pointer = /^gitdir:\s*(.+)$/m.exec(smallText(dir, '.git') ?? '')?.[1]?.trim();
      return pointer ? resolve(dir, pointer) : null;
    }
    if (dirname(dir) === dir) return null;
  }
}

/** A small regular file of git's, read by the containment rule; null for anything else. */
function smallText(folder: string, name: string): string | null {
  return readContained(folder, name, 4096).bytes?.toString('utf8') ?? null;
}
