import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { kindOf, notRealFolder } from './contained-fs.mjs';
import { FlowLayout } from './flow-layout.ts';
import { IgnoreRules } from './ignore-rules.ts';

/**
 * The folders a watch of the flow root `root` takes, itself included, counted up to `limit` (past it, the count
 * stops): real folders only (links are never entered), not ignored, as the watcher enters them. The watcher counts
 * with this before it watches a root, and `flowsync doctor` to say how many watches sync needs.
 */
export function countWatchedFolders(
  repoRoot: string,
  root: string,
  rules: IgnoreRules,
  limit = Number.POSITIVE_INFINITY,
): number {
  if (notRealFolder(repoRoot, root) !== null) return 0;
  const pending = [root];
  let count = 0;
  while (pending.length > 0 && count < limit) {
    const folder = pending.pop()!;
    count++;
    try {
      for (const entry of readdirSync(join(repoRoot, folder), { withFileTypes: true })) {
        const path = `${folder}/${entry.name}`;
        if (kindOf(entry) === 'folder' && !rules.ignores(`${path}/`)) pending.push(path);
      }
    } catch {
      // gone or unreadable meanwhile: not watched either
    }
  }
  return count;
}

/** The folders directly in a flow root that are not ignored: its flows (links and the like are never entered). */
export function flowFoldersIn(repoRoot: string, root: string, rules: IgnoreRules): string[] {
  // Checked at each call: a root swapped for a link since the last one is not listed.
  if (notRealFolder(repoRoot, root) !== null) return [];
  try {
    return readdirSync(join(repoRoot, root), { withFileTypes: true })
      .filter((entry) => kindOf(entry) === 'folder' && !rules.ignores(`${root}/${entry.name}/`))
      .map((entry) => entry.name)
      .sort();
  } catch {
    return []; // gone meanwhile: the presence check sees it
  }
}

/** What a repository's flow roots hold, as the watcher sees them. */
export interface FlowRootSurvey {
  root: string;
  /** Whether the root is a real folder of the repository (not absent, not a link). */
  present: boolean;
  flows: number;
  /** The folders a watch of it takes (FlowWatcher), the root included; 0 when absent. */
  folders: number;
}

/** Each flow root of a repository: there or not, its flows, and the inotify watches it needs (flowsync doctor). */
export function surveyFlowRoots(repoRoot: string, roots: readonly string[]): FlowRootSurvey[] {
  const rules = new IgnoreRules(repoRoot);
  return new FlowLayout(roots).roots.map((root) => ({
    root,
    present: notRealFolder(repoRoot, root) === null,
    flows: flowFoldersIn(repoRoot, root, rules).length,
    folders: countWatchedFolders(repoRoot, root, rules),
  }));
}
