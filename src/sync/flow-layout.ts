import { unsafePathReason } from '../protocol/index.ts';

/** Where a file sits in the flow model: its flow (a directory right under a flow root) and its path inside it. */
export interface FlowFileLocation {
  flowPath: string;
  path: string;
}

/** A flow root as the layout keeps it: `/`-separated, without a leading `./` or a trailing slash. */
export function normalFlowRoot(root: string): string {
  return root
    .replaceAll('\\', '/')
    .replace(/^\.\/+/, '')
    .replace(/\/+$/, '');
}

/**
 * Why a flow root cannot be one, or null: the service's rule for a relative path (not absolute, no `..`, no empty
 * or `.` segment), applied to the root as the layout keeps it. Whether it is a real folder inside the repository
 * is the containment rule's to say (notRealFolder), on disk.
 */
export function flowRootProblem(root: string): string | null {
  const reason = unsafePathReason(normalFlowRoot(root));
  return reason === null
    ? null
    : `the flow folder "${root}" ${reason}: give a folder inside the repository, e.g. flows`;
}

/**
 * The repository's flow roots, normalized (`flows`, `apps/flows`: relative, `/`-separated, no trailing slash).
 * A flow is each directory directly under a root; its files are everything below it.
 */
export class FlowLayout {
  readonly roots: readonly string[];

  constructor(roots: readonly string[]) {
    this.roots = roots.map(normalFlowRoot);
  }

  /** The flow and path of a file, from its path relative to the repository; null when it is in no flow. */
  locate(repoPath: string): FlowFileLocation | null {
    for (const root of this.roots) {
      if (!repoPath.startsWith(`${root}/`)) continue;
      const rest = repoPath.slice(root.length + 1);
      const slash = rest.indexOf('/');
      // A file directly in the root belongs to no flow (a README next to the flows, say).
      if (slash <= 0 || slash === rest.length - 1) return null;
      return { flowPath: `${root}/${rest.slice(0, slash)}`, path: rest.slice(slash + 1) };
    }
    return null;
  }

  /** The flow a directory is, or null: for a directory right under a root. */
  flowOfDirectory(repoPath: string): string | null {
    for (const root of this.roots) {
      if (!repoPath.startsWith(`${root}/`)) continue;
      const rest = repoPath.slice(root.length + 1);
      if (rest !== '' && !rest.includes('/')) return repoPath;
    }
    return null;
  }

  /** Why the service would refuse this file's paths, or null when both are safe. */
  static unsafeReason(location: FlowFileLocation): string | null {
    return unsafePathReason(location.flowPath) ?? unsafePathReason(location.path);
  }
}
