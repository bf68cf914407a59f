import { lstatSync, readdirSync, type Dirent } from 'node:fs';
import { join } from 'node:path';
import { setImmediate as yieldToEventLoop } from 'node:timers/promises';
import type { FlowLayout } from './flow-layout.ts';
import type { IgnoreRules } from './ignore-rules.ts';

/** A file found on disk, with what the mtime+size cache needs. */
export interface ScannedFile {
  flowPath: string;
  path: string;
  size: number;
  mtimeMs: number;
}

/** Entries looked at between two yields to the event loop: a few milliseconds of work each. */
const SLICE = 2000;

/**
 * Walks the flow roots (or folders below them) and lists every file of every flow, skipping ignored folders
 * without entering them. Symbolic links are not followed, as git and Syncthing do not.
 *
 * The walk uses the synchronous calls in slices, yielding between them: for 100,000 files that is 0.4 s against
 * 1.5 s through the thread pool, and the event loop still answers in between.
 */
export async function scanFlows(
  repoRoot: string,
  layout: FlowLayout,
  rules: IgnoreRules,
  under: readonly string[] = layout.roots,
): Promise<ScannedFile[]> {
  const files: string[] = [];
  const folders = [...under];
  let budget = SLICE;
  while (folders.length > 0) {
    const folder = folders.pop()!;
    let entries: Dirent[];
    try {
      entries = readdirSync(join(repoRoot, folder), { withFileTypes: true });
    } catch {
      continue; // gone or unreadable: what is not there is not in the flow
    }
    for (const entry of entries) {
      const path = folder === '' ? entry.name : `${folder}/${entry.name}`;
      if (entry.isDirectory()) {
        if (!rules.ignores(`${path}/`)) folders.push(path);
      } else if (entry.isFile() && !rules.ignores(path) && layout.locate(path)) {
        files.push(path);
      }
    }
    budget -= entries.length;
    if (budget <= 0) {
      budget = SLICE;
      await yieldToEventLoop();
    }
  }

  const scanned: ScannedFile[] = [];
  for (let start = 0; start < files.length; start += SLICE) {
    for (const path of files.slice(start, start + SLICE)) {
      const stat = lstatSync(join(repoRoot, path), { throwIfNoEntry: false });
      const location = layout.locate(path);
      if (stat?.isFile() && location) scanned.push({ ...location, size: stat.size, mtimeMs: stat.mtimeMs });
    }
    await yieldToEventLoop();
  }
  return scanned;
}
