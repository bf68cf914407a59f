import { existsSync, realpathSync } from 'node:fs';
import { dirname, relative, resolve } from 'node:path';
import { expandHome, loadConfig } from '../agent/index.ts';

/**
 * A path a user typed (a file, a flow folder, a repository; relative to where the command runs, `~` allowed) as
 * the repository folder it is in and its place inside it (`/`-separated, '' for the repository itself). The
 * repository is the configured one that holds it (the innermost), else the nearest folder above it with a `.git`.
 * A file that is gone from disk (deleted here) still has its place.
 */
export function repositoryPathOf(typed: string): { folder: string; inside: string } {
  const configured = loadConfig().repositories.map((repository) =>
    realish(resolve(expandHome(repository.path))),
  );
  const real = realish(resolve(expandHome(typed)));
  const folder = repositoryFolderOf(real, configured);
  return { folder, inside: relative(folder, real).split('\\').join('/') };
}

function repositoryFolderOf(real: string, configured: readonly string[]): string {
  const holding = configured
    .filter((root) => real === root || real.startsWith(`${root}/`))
    .sort((a, b) => b.length - a.length);
  if (holding[0] !== undefined) return holding[0];
  for (let at = real; ; at = dirname(at)) {
    if (existsSync(`${at}/.git`)) return at;
    if (dirname(at) === at) break;
  }
  let folder = real;
  while (!existsSync(folder)) folder = dirname(folder);
  return folder;
}

/** The real path of a path, or of its nearest existing folder with the rest appended (a file deleted here). */
function realish(path: string): string {
  if (existsSync(path)) return realpathSync(path);
  const parent = dirname(path);
  return parent === path ? path : `${realish(parent)}/${path.slice(parent.length + 1)}`;
}
