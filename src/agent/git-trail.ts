import { execFile } from 'node:child_process';
import { closeSync, constants, fstatSync, lstatSync, openSync, readSync } from 'node:fs';
import { join, relative, sep } from 'node:path';
import { promisify } from 'node:util';
import type { GitPort, GitTrail } from '../sync/index.ts';
import { currentBranch, findGitDir, gitTopLevel } from './git.ts';

const run = promisify(execFile);

/** The end of a reflog read for its newest entry: a line is a few hundred bytes; the file grows for ever. */
const REFLOG_TAIL = 4096;

/**
 * What the engine asks of git to tell git's motions from a person's edits (src/sync/git-motion.ts): the
 * trail git leaves in its folder (small reads, no process), and one `git status` per batch for which files differ
 * from HEAD's tree. Null outside a git repository.
 */
export function gitPort(root: string, flowRoots: readonly string[]): GitPort | undefined {
  if (findGitDir(root) === null) return undefined;
  return {
    trail: () => gitTrail(root),
    differFromHead: (paths) => differFromHead(root, flowRoots, paths),
  };
}

/** What git left in its folder now. */
export function gitTrail(root: string): GitTrail {
  const gitDir = findGitDir(root);
  const none: GitTrail = { head: null, stash: null, indexAt: null, busy: false, branch: currentBranch(root) };
  if (gitDir === null) return none;
  return {
    ...none,
    head: newestEntry(join(gitDir, 'logs', 'HEAD')),
    stash: newestEntry(join(gitDir, 'logs', 'refs', 'stash')),
    indexAt: mtimeOf(join(gitDir, 'index')),
    busy: mtimeOf(join(gitDir, 'index.lock')) !== null,
  };
}

/**
 * Of `paths` (relative to the root), those whose disk differs from HEAD's tree: modified, deleted from it, or not in
 * it (new). One `git status` over the flow roots, which neither writes the index (`--no-optional-locks`: its write
 * would look like git's own motion) nor runs a file-system monitor. A failure (no git, no commit yet) says every
 * file differs: nothing is taken for git's.
 */
async function differFromHead(
  root: string,
  flowRoots: readonly string[],
  paths: readonly string[],
): Promise<Set<string>> {
  const top = gitTopLevel(root);
  if (top === null) return new Set(paths);
  const prefix = relative(top, root).split(sep).join('/');
  try {
    const { stdout } = await run(
      'git',
      [
        '-C',
        root,
        '--no-optional-locks',
        '-c',
        'core.fsmonitor=false',
        'status',
        '--porcelain',
        '-z',
        '--untracked-files=all',
        '--no-renames',
        '--',
        ...flowRoots,
      ],
      { maxBuffer: 256 * 1024 * 1024 },
    );
    const differ = new Set<string>();
    for (const entry of stdout.split('\0')) {
      if (entry.length < 4) continue;
      const path = entry.slice(3);
      differ.add(prefix === '' ? path : path.startsWith(`${prefix}/`) ? path.slice(prefix.length + 1) : path);
    }
    return new Set(paths.filter((path) => differ.has(path)));
  } catch {
    return new Set(paths);
  }
}

/** The newest line of a reflog: its message and time (ms); null when there is none or it cannot be read. */
function newestEntry(file: string): { message: string; at: number } | null {
  const tail = readTail(file);
  if (tail === null) return null;
  const line = tail.trimEnd().split('\n').pop() ?? '';
  // `<old> <new> <name> <<email>> <seconds> <zone>\t<message>`
  const match = /> (\d+) [+-]\d{4}\t(.*)$/.exec(line);
  return match ? { at: Number(match[1]) * 1000, message: match[2]! } : null;
}

/** The last REFLOG_TAIL bytes of a regular file, not following a link; null for anything else. */
function readTail(file: string): string | null {
  let fd: number;
  try {
    fd = openSync(file, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
  } catch {
    return null;
  }
  try {
    const stat = fstatSync(fd);
    if (!stat.isFile()) return null;
    const length = Math.min(stat.size, REFLOG_TAIL);
    const buffer = Buffer.alloc(length);
    readSync(fd, buffer, 0, length, stat.size - length);
    return buffer.toString('utf8');
  } finally {
    closeSync(fd);
  }
}

function mtimeOf(file: string): number | null {
  try {
    return lstatSync(file).mtimeMs;
  } catch {
    return null;
  }
}
