import ignore, { type Ignore } from 'ignore';
import { readContained } from './contained-fs.mjs';

/**
 * Never part of a flow: version-control and dependency folders, editor swap and backup files, OS litter.
 * (vim writes `4913` to probe a folder; emacs `.#name` locks and `#name#` autosaves; JetBrains `___jb_tmp___`.)
 */
const ALWAYS_IGNORED = [
  '.git/',
  'node_modules/',
  '.flowsync/',
  '*.swp',
  '*.swo',
  '*.swx',
  '*~',
  '.#*',
  '#*#',
  '4913',
  '*___jb_tmp___',
  '*___jb_old___',
  '.DS_Store',
  '._*',
  'Thumbs.db',
  'desktop.ini',
];

const builtIn = ignore().add(ALWAYS_IGNORED);

/** A .gitignore larger than this is not read (git's own are a few KiB; the Linux kernel's largest is 2 KiB). */
const MAX_BYTES = 1024 * 1024;

/**
 * The repository's ignore rules: the built-in list plus every `.gitignore` from the repository root down to the
 * file, each applied to paths relative to its own folder, as git does. Matchers are cached per folder;
 * `forget` drops one when its `.gitignore` changes.
 */
export class IgnoreRules {
  private readonly perFolder = new Map<string, Ignore | null>();

  constructor(private readonly repoRoot: string) {}

  /** `repoPath` is relative to the repository root, `/`-separated; directories end with `/`. */
  ignores(repoPath: string): boolean {
    if (builtIn.ignores(repoPath)) return true;
    const segments = repoPath.replace(/\/$/, '').split('/');
    const isDirectory = repoPath.endsWith('/');
    for (let depth = 0; depth < segments.length; depth++) {
      const folder = segments.slice(0, depth).join('/');
      const rules = this.rulesOf(folder);
      if (!rules) continue;
      const relative = segments.slice(depth).join('/') + (isDirectory ? '/' : '');
      if (rules.ignores(relative)) return true;
    }
    return false;
  }

  forget(folder: string): void {
    this.perFolder.delete(folder);
  }

  forgetAll(): void {
    this.perFolder.clear();
  }

  private rulesOf(folder: string): Ignore | null {
    if (this.perFolder.has(folder)) return this.perFolder.get(folder) ?? null;
    let rules: Ignore | null = null;
    // Read under the containment rule like every file of the repository: a .gitignore that is a link is not read.
    // One with a second hard link is: it is never sent, and skipping it would send what it ignores.
    const read = readContained(
      this.repoRoot,
      folder === '' ? '.gitignore' : `${folder}/.gitignore`,
      MAX_BYTES,
      undefined,
      true,
    );
    // Unreadable now (EACCES, EMFILE…): not "no rules", which would send what it ignores (a .env, say). The
    // scan or burst that asked fails, deletes nothing, and its round backs off and asks again.
    if (read.unreadable)
      throw new Error(`${folder === '' ? '' : `${folder}/`}.gitignore could not be read (${read.code})`);
    if (read.bytes) rules = ignore().add(read.bytes.toString('utf8'));
    this.perFolder.set(folder, rules);
    return rules;
  }
}
