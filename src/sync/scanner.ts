import type { Dirent } from 'node:fs';
import { lstat, readdir } from 'node:fs/promises';
import { join } from 'node:path';
import type { FlowLayout } from './flow-layout.ts';
import type { IgnoreRules } from './ignore-rules.ts';

/** A file found on disk, with what the mtime+size cache needs. */
export interface ScannedFile {
  flowPath: string;
  path: string;
  size: number;
  mtimeMs: number;
}

const STAT_CONCURRENCY = 64;

/**
 * Walks the flow roots (or one folder below them) and lists every file of every flow, skipping ignored folders
 * without entering them. Symbolic links are not followed, as git and Syncthing do not.
 */
export async function scanFlows(
  repoRoot: string,
  layout: FlowLayout,
  rules: IgnoreRules,
  under: readonly string[] = layout.roots,
): Promise<ScannedFile[]> {
  const files: string[] = [];
  const walk = async (folder: string): Promise<void> => {
    let entries: Dirent[];
    try {
      entries = await readdir(join(repoRoot, folder), { withFileTypes: true });
    } catch {
      return; // gone or unreadable: what is not there is not in the flow
    }
    const subfolders: Promise<void>[] = [];
    for (const entry of entries) {
      const path = folder === '' ? entry.name : `${folder}/${entry.name}`;
      if (entry.isDirectory()) {
        if (!rules.ignores(`${path}/`)) subfolders.push(walk(path));
      } else if (entry.isFile() && !rules.ignores(path) && layout.locate(path)) {
        files.push(path);
      }
    }
    await Promise.all(subfolders);
  };
  await Promise.all(under.map((folder) => walk(folder)));

  const scanned: ScannedFile[] = [];
  for (let start = 0; start < files.length; start += STAT_CONCURRENCY) {
    const chunk = files.slice(start, start + STAT_CONCURRENCY);
    const stats = await Promise.all(chunk.map((path) => lstat(join(repoRoot, path)).catch(() => null)));
    chunk.forEach((path, index) => {
      const stat = stats[index];
      const location = layout.locate(path);
      if (!stat?.isFile() || !location) return;
      scanned.push({ ...location, size: stat.size, mtimeMs: stat.mtimeMs });
    });
  }
  return scanned;
}
