import { unsafePathReason } from '../protocol/index.ts';

/** Where a file sits in the flow model: its flow (a directory right under a flow root) and its path inside it. */
export interface FlowFileLocation {
  flowPath: string;
  path: string;
}

/**
 * The repository's flow roots, normalized (`flows`, `apps/flows`: relative, `/`-separated, no trailing slash).
 * A flow is each directory directly under a root; its files are everything below it.
 */
export class FlowLayout {
  readonly roots: readonly string[];

  constructor(roots: readonly string[]) {
    this.roots = roots.map((root) =>
      root
        .replaceAll('\\', '/')
        .replace(/^\.\/+/, '')
        .replace(/\/+$/, ''),
    );
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
