import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';

export interface TestRepo {
  dir: string;
  root: string;
  write(path: string, content: string | Buffer): void;
  remove(path: string): void;
  cleanup(): void;
}

/** A repository folder in a temporary directory, with files given by path relative to its root. */
export function makeRepo(files: Record<string, string | Buffer> = {}): TestRepo {
  const dir = mkdtempSync(join(tmpdir(), 'flowsync-repo-'));
  const root = join(dir, 'repo');
  mkdirSync(root);
  const write = (path: string, content: string | Buffer) => {
    mkdirSync(dirname(join(root, path)), { recursive: true });
    writeFileSync(join(root, path), content);
  };
  for (const [path, content] of Object.entries(files)) write(path, content);
  return {
    dir,
    root,
    write,
    remove: (path) => rmSync(join(root, path), { recursive: true, force: true }),
    cleanup: () => rmSync(dir, { recursive: true, force: true }),
  };
}

/** Every file below `folder` (relative to the root), as `path → content`, read plainly from disk. */
export function diskTree(root: string, folder = 'flows', skip: (path: string) => boolean = () => false) {
  const tree: Record<string, string> = {};
  const walk = (relative: string) => {
    let names: string[];
    try {
      names = readdirSync(join(root, relative));
    } catch {
      return;
    }
    for (const name of names) {
      const path = `${relative}/${name}`;
      if (skip(path)) continue;
      if (statSync(join(root, path)).isDirectory()) walk(path);
      // Files directly in the flow root belong to no flow.
      else if (path.split('/').length > 2) tree[path] = readFileSync(join(root, path), 'utf8');
    }
  };
  walk(folder);
  return tree;
}

type Read = <T>(sql: string, ...params: unknown[]) => T[];

/** What the service stores for a repository, as `flow_path/path → content`, read from its database. */
export function serviceTree(read: Read, owner: string, name: string): Record<string, string> {
  const rows = read<{ path: string; content: string }>(
    `SELECT f.flow_path || '/' || ff.path AS path, ff.content FROM flow_files ff
     JOIN flows f ON f.id = ff.flow_id JOIN repos r ON r.id = f.repo_id
     WHERE r.owner = ? AND r.name = ? ORDER BY 1`,
    owner,
    name,
  );
  return Object.fromEntries(rows.map((row) => [row.path, row.content]));
}

/** Polls until `check` stops throwing, then returns; rethrows its last error after `timeoutMs`. */
export async function eventually(
  check: () => void | Promise<void>,
  timeoutMs = 15_000,
  intervalMs = 50,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      await check();
      return;
    } catch (error) {
      if (Date.now() > deadline) throw error;
      await sleep(intervalMs);
    }
  }
}
