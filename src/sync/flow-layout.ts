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
  /** Each root with its slash (`flows/`): what a path in it starts with, made once rather than at each path. */
  private readonly prefixes: readonly string[];

  constructor(roots: readonly string[]) {
    this.roots = roots.map(normalFlowRoot);
    this.prefixes = this.roots.map((root) => `${root}/`);
  }

  /** The flow and path of a file, from its path relative to the repository; null when it is in no flow. */
  locate(repoPath: string): FlowFileLocation | null {
    const slash = this.flowEnd(repoPath);
    return slash < 0 ? null : { flowPath: repoPath.slice(0, slash), path: repoPath.slice(slash + 1) };
  }

  /** Whether a file is in a flow (locate is not null), without making its location: the scan asks it per file. */
  inFlow(repoPath: string): boolean {
    return this.flowEnd(repoPath) >= 0;
  }

  /** Where the flow's folder name ends in a file's path (the slash after it), or -1 when it is in no flow. */
  private flowEnd(repoPath: string): number {
    for (const prefix of this.prefixes) {
      if (!repoPath.startsWith(prefix)) continue;
      const slash = repoPath.indexOf('/', prefix.length);
      // A file directly in the root belongs to no flow (a README next to the flows, say).
      if (slash <= prefix.length || slash === repoPath.length - 1) return -1;
      return slash;
    }
    return -1;
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
