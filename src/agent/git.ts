import { execFile } from 'node:child_process';
import { promisify } from 'node:util';

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

/** The URL of the repository's `origin` remote, or null. */
export function remoteUrl(root: string): Promise<string | null> {
  return gitConfig(root, 'remote.origin.url');
}

/** The email git would sign a commit in this repository with, or null. */
export function userEmail(root: string): Promise<string | null> {
  return gitConfig(root, 'user.email');
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
