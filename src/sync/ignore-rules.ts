import ignore, { type Ignore } from 'ignore';
import { readContained } from './contained-fs.mjs';
import { CONFLICT_COPY_PATTERN } from './conflict-copy.ts';

/**
 * Never part of a flow: version-control and dependency folders, editor swap, backup and temporary files, OS
 * litter. Editors save through a temporary name renamed over the file, and each one seen here was uploaded
 * half-written and deleted again a moment later: gio (gedit, GNOME's editors) writes `.goutputstream-XXXXXX`,
 * JetBrains `name___jb_tmp___` (and keeps the old file as `name___jb_old___` meanwhile), VS Code's atomic writes
 * `name.vsctmp` (diskFileSystemProvider: the name plus the postfix `.vsctmp`); vim writes `4913` to probe a
 * folder; emacs `.#name` locks and `#name#` autosaves (the `#` escaped: at the start of a line it is a comment,
 * and `#*#` matched nothing).
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
  '\\#*#',
  '4913',
  '*___jb_tmp___',
  '*___jb_old___',
  '.goutputstream-*',
  '*.vsctmp',
  '.DS_Store',
  '._*',
  'Thumbs.db',
  'desktop.ini',
  // A checkout's own bytes kept beside a file when it took the service's version (conflict-copy.ts).
  CONFLICT_COPY_PATTERN,
];

/** A .gitignore larger than this is not read (git's own are a few KiB; the Linux kernel's largest is 2 KiB). */
const MAX_BYTES = 1024 * 1024;

/**
 * The repository's ignore rules: the built-in list plus every `.gitignore` from the repository root down to the
 * file, each applied to paths relative to its own folder, as git does. Matchers are cached per folder;
 * `forget` drops one when its `.gitignore` changes.
 */
export class IgnoreRules {
  /**
   * The `ignore` package keeps the answer for every path it was asked about, for good: after a scan of 100,000
   * files each matcher held 100,000 paths with their answers (docs/memory.md). dropAnswers starts them afresh
   * from their patterns once a scan is over, so a repository at rest holds its patterns, not its tree.
   */
  private builtIn = ignore().add(ALWAYS_IGNORED);
  private readonly perFolder = new Map<string, { rules: Ignore; lines: string[] } | null>();
  /** .gitignore lines not applied (boundedPatterns), by `file:line`, each with the message that names it. */
  readonly problems = new Map<string, string>();

  constructor(private readonly repoRoot: string) {}

  /** `repoPath` is relative to the repository root, `/`-separated; directories end with `/`. */
  ignores(repoPath: string): boolean {
    const isDirectory = repoPath.endsWith('/');
    const path = isDirectory ? repoPath.slice(0, -1) : repoPath;
    // No built-in pattern has a slash but at its end, so each applies to one name wherever it is: tested name by
    // name (each folder on the way as a folder), it answers from the names a repository uses, a few hundred,
    // instead of one cached answer per path (the scan's largest cost after lstat: 0.84 s at 100,000 files). Names
    // and folders are cut from the path by index, not split and joined again: the scan asks per file.
    for (let start = 0; ;) {
      const slash = path.indexOf('/', start);
      const last = slash < 0;
      const name = last ? path.slice(start) : path.slice(start, slash + 1);
      if (this.builtIn.ignores(last && isDirectory ? `${name}/` : name)) return true;
      if (last) return this.ignoredByGitignores(path, isDirectory);
      start = slash + 1;
    }
  }

  /** Whether a .gitignore of the root or of a folder on the way to `path` (without its trailing slash) ignores it. */
  private ignoredByGitignores(path: string, isDirectory: boolean): boolean {
    for (let slash = -1; ;) {
      const rules = this.rulesOf(slash < 0 ? '' : path.slice(0, slash));
      if (rules?.ignores(`${path.slice(slash + 1)}${isDirectory ? '/' : ''}`)) return true;
      slash = path.indexOf('/', slash + 1);
      if (slash < 0) return false;
    }
  }

  forget(folder: string): void {
    this.perFolder.delete(folder);
    const file = folder === '' ? '.gitignore:' : `${folder}/.gitignore:`;
    for (const key of this.problems.keys()) if (key.startsWith(file)) this.problems.delete(key);
  }

  /**
   * A folder just listed without a `.gitignore`: it has no rules of its own, known without trying to open one (the
   * scan lists every folder anyway; 1,000 folders cost 0.2 s of failed opens and their checks at a restart).
   */
  listedWithout(folder: string): void {
    if (!this.perFolder.has(folder)) this.perFolder.set(folder, null);
  }

  /** Lets go of the answers each matcher keeps (see builtIn): after a scan, which asked about every file. */
  dropAnswers(): void {
    this.builtIn = ignore().add(ALWAYS_IGNORED);
    for (const [folder, kept] of this.perFolder)
      if (kept) this.perFolder.set(folder, { rules: ignore().add(kept.lines), lines: kept.lines });
  }

  forgetAll(): void {
    this.perFolder.clear();
    this.problems.clear();
  }

  private rulesOf(folder: string): Ignore | null {
    if (this.perFolder.has(folder)) return this.perFolder.get(folder)?.rules ?? null;
    let kept: { rules: Ignore; lines: string[] } | null = null;
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
    if (read.bytes) {
      const file = folder === '' ? '.gitignore' : `${folder}/.gitignore`;
      const { lines, refused } = boundedPatterns(read.bytes.toString('utf8'));
      kept = { rules: ignore().add(lines), lines };
      for (const { line, pattern } of refused) {
        this.problems.set(
          `${file}:${line}`,
          `${file} line ${line} is not applied, as it could take the agent minutes to match: ${pattern} ` +
            `(at most ${MAX_MIDDLE_GLOBSTARS} ** between folder names and ${MAX_WILDCARDS} wildcards a line: simplify it)`,
        );
      }
    }
    this.perFolder.set(folder, kept);
    return kept?.rules ?? null;
  }
}

/**
 * Each middle `**` of a pattern (`a/**\/b`) becomes a `(?:/[^/]+)*` in the regular expression the `ignore` package
 * makes of it, and k of them try every way to split a path of n folders among them, some n^k ways, before a
 * path that does not match fails. Measured here: 6 against a path 41 folders deep, 290 ms a path; 10 against 50
 * folders, over 300 s, and the first scan never ended. One is linear (91 ms at 2,000 folders, the deepest path a
 * 4,096-byte PATH_MAX holds); two are 26 s at 500 folders. So a line with more than one is not applied, and is
 * reported. `**` at the start or end of a pattern costs nothing (it becomes `(?:^|/)` or `/.*`), and `a/**\/**\/b`
 * means `a/**\/b` to git, so those are not counted. Wildcards within a folder name are matched without
 * backtracking by `ignore` (10 `*a` against a 60-letter name: 0.2 ms); the cap on them only keeps a line
 * bounded should that change, far above what a real .gitignore writes.
 */
const MAX_MIDDLE_GLOBSTARS = 1;
const MAX_WILDCARDS = 32;

/** The .gitignore's lines that are safe to match, and the ones refused (1-based line numbers). */
export function boundedPatterns(text: string): {
  lines: string[];
  refused: { line: number; pattern: string }[];
} {
  const lines: string[] = [];
  const refused: { line: number; pattern: string }[] = [];
  text.split(/\r?\n/).forEach((raw, index) => {
    // Consecutive `**` folders mean one to git: `a/**/**/b` is `a/**/b`.
    const line = raw.replace(/(^|\/)\*\*(?:\/\*\*)+(?=\/|$)/g, '$1**');
    if (isTooCostly(line)) refused.push({ line: index + 1, pattern: raw.trim() });
    else lines.push(line);
  });
  return { lines, refused };
}

function isTooCostly(line: string): boolean {
  if (line.startsWith('#')) return false;
  const segments = line.replace(/^!/, '').replace(/^\//, '').replace(/\/$/, '').split('/');
  const middle = segments.slice(1, -1).filter((segment) => segment === '**').length;
  const wildcards = (line.match(/[*?[]/g) ?? []).length;
  return middle > MAX_MIDDLE_GLOBSTARS || wildcards > MAX_WILDCARDS;
}
