import { accessSync, constants, opendirSync, realpathSync, statSync } from 'node:fs';
import { homedir } from 'node:os';
import { isAbsolute, join, relative, resolve } from 'node:path';
import { flowRootProblem, normalFlowRoot, notRealFolder } from '../sync/index.ts';
import { ConfigError } from './config-error.ts';

/** `~` and `~/…` as a shell would expand them: a folder typed in the window is not passed through a shell. */
export function expandHome(folder: string): string {
  const trimmed = folder.trim();
  if (trimmed === '~') return homedir();
  if (trimmed.startsWith('~/')) return join(homedir(), trimmed.slice(2));
  return trimmed;
}

/**
 * The one check of a repository folder, for the CLI, the window and the desktop app: `~` expanded, it exists, it
 * is a folder, and it can be read. Returns its real path; a ConfigError says, in one line, what is wrong and what
 * to give instead.
 */
export function checkRepositoryFolder(folder: string): string {
  const shown = folder.trim();
  if (shown === '') throw new ConfigError('Give the folder of a repository, e.g. ~/code/app.');
  let root: string;
  try {
    root = realpathSync(resolve(expandHome(shown)));
  } catch {
    throw new ConfigError(`${shown} does not exist: give the folder of a repository.`);
  }
  if (!statSync(root).isDirectory())
    throw new ConfigError(`${shown} is not a folder: give the folder of a repository.`);
  const wide = tooWide(shown, root);
  if (wide !== null) throw new ConfigError(`${wide}: give the folder of one repository, e.g. ~/code/app.`);
  try {
    accessSync(root, constants.R_OK | constants.X_OK);
  } catch {
    throw new ConfigError(`${shown} cannot be read by you: check its permissions (ls -ld ${shown}).`);
  }
  return root;
}

/**
 * Why a folder is too wide to be one repository (`~ is your home folder, not a repository`), or null: `/`, the
 * home folder, or a folder that holds it (`/home`). Any of them holds flowsync's own data folder, the keychain and
 * every checkout of the user: a `flows/` found there is no repository's, and the first scan would walk the whole
 * home (and take every inotify watch the machine has). Folders beside the home (`/srv/app`, `/tmp/x`) and inside it
 * are repositories as usual. `root` is the folder's real path when it exists (a link to the home is the home);
 * `shown` is how the user wrote it.
 */
export function tooWide(shown: string, root = folderKey(shown)): string | null {
  const home = folderKey(homedir());
  if (root === '/') return `${shown} is the whole disk, not a repository`;
  if (root === home) return `${shown} is your home folder, not a repository`;
  const below = relative(root, home);
  if (below !== '..' && !below.startsWith('../') && !isAbsolute(below))
    return `${shown} holds your home folder, not a repository`;
  return null;
}

/**
 * A folder as one string: `~` expanded, resolved against the working folder (which also drops a trailing slash),
 * then its real path when it exists, so that a link to it and the folder itself compare equal.
 */
export function folderKey(folder: string): string {
  const absolute = resolve(expandHome(folder));
  try {
    return realpathSync(absolute);
  } catch {
    return absolute;
  }
}

/**
 * A repository's flow roots as the user gave them (the window's Settings), checked: each relative, inside the
 * repository (no `..`, not absolute: the path rule), and a real folder there by the containment rule, or not there
 * yet (kept: nothing to sync until it is made). Returns them as the layout keeps them, each once.
 */
export function checkFlowRoots(repoRoot: string, given: readonly string[]): string[] {
  const roots = [...new Set(given.map((root) => normalFlowRoot(root.trim())).filter((root) => root !== ''))];
  if (roots.length === 0) throw new ConfigError('Give at least one flow folder, e.g. flows.');
  for (const root of roots) {
    const problem = flowRootProblem(root);
    if (problem !== null) throw new ConfigError(`${problem[0]!.toUpperCase()}${problem.slice(1)}.`);
    const outside = notRealFolder(repoRoot, root);
    if (outside === null || outside.kind === 'missing') continue;
    const what =
      outside.kind === 'symlink'
        ? 'is a link'
        : outside.kind === 'unreadable'
          ? 'cannot be read'
          : outside.kind === 'file'
            ? 'is a file'
            : 'is not a folder';
    throw new ConfigError(
      `The flow folder "${root}": ${outside.path} ${what}; give a real folder inside the repository.`,
    );
  }
  return roots;
}

/**
 * Errors that say a folder is not there now, as a drive that is not mounted (or a network share that went away)
 * makes it: not a mistake in the config, and not a reason to send or delete anything.
 */
const NOT_THERE = new Set(['ENOENT', 'ENOTDIR', 'ESTALE', 'ENODEV', 'EIO']);

/**
 * Whether a configured repository's folder is not there: absent, or an empty folder (a mount point with nothing
 * mounted on it: a repository folder always holds something, its `.git` or its flows). Such a folder is
 * `missing`, never identified (an empty folder has no git remote, so it would be a new `local/<folder>`). A folder
 * that is there but cannot be read is not "not there": checkRepositoryFolder says what is wrong with it.
 */
export function folderNotThere(folder: string): boolean {
  const path = resolve(expandHome(folder));
  try {
    // The configured folder itself, as checkRepositoryFolder takes it (a link the user named is followed); its first
    // entry only, not a listing of a whole repository's top folder every second while it is awaited.
    if (!statSync(path).isDirectory()) return false;
    const entries = opendirSync(path);
    try {
      return entries.readSync() === null;
    } finally {
      entries.closeSync();
    }
  } catch (error) {
    return NOT_THERE.has((error as NodeJS.ErrnoException).code ?? '');
  }
}
