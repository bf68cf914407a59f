import { lstatSync } from 'node:fs';
import { dirname, join } from 'node:path';
import type { RemoteClient } from '../client/index.ts';
import {
  FILE_WARNINGS,
  MAX_FILE_BYTES,
  MAX_JSON_DEPTH,
  describeFileWarning,
  describeIssues,
  findDeepNesting,
  repoConfigSchema,
  toWireIssues,
  type RepoConfig,
  type WireIssue,
} from '../protocol/index.ts';
import { notRealFolder, readContained, writeContained, type NotContained } from '../sync/index.ts';

/** Where a repository keeps its configuration, relative to its root. */
export const REPO_CONFIG_FILE = '.flowsync/repo-config.json';

export class RepoConfigFileError extends Error {
  override readonly name = 'RepoConfigFileError';
  constructor(
    message: string,
    readonly issues: WireIssue[] = [],
  ) {
    super(message);
  }
}

/** Reads and validates `.flowsync/repo-config.json`; null when there is none. */
export function readRepoConfigFile(root: string): RepoConfig | null {
  // The containment rule of the flows: a regular file reached through real folders, never through a link.
  refuseLinkedFolder(root);
  const read = readContained(root, REPO_CONFIG_FILE, MAX_FILE_BYTES);
  if (read.missing) return null;
  // Not "no config": a read error is not a deletion.
  if (read.unreadable)
    throw new RepoConfigFileError(
      `${REPO_CONFIG_FILE} could not be read (${read.code}): check its permissions.`,
    );
  if (read.warning) {
    throw new RepoConfigFileError(
      `${REPO_CONFIG_FILE} is ${describeFileWarning(read.warning)}: make it a plain file in the repository.`,
    );
  }
  if (read.bytes === null)
    throw new RepoConfigFileError(
      `${REPO_CONFIG_FILE} is ${FILE_WARNINGS.oversized.reason}: make it smaller.`,
    );
  const text = read.bytes.toString('utf8');
  // One level less than the service reads: it gets these fields inside {"args": …}. Checked before the schema,
  // which recurses once a level (a hostile repository's file overflowed the stack).
  const deep = findDeepNesting(text, MAX_JSON_DEPTH - 1);
  if (deep) {
    const field = ['config', ...deep].join('.');
    throw new RepoConfigFileError(
      `${REPO_CONFIG_FILE} nests deeper than ${MAX_JSON_DEPTH - 1} levels at ${field}: make it flatter.`,
    );
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    throw new RepoConfigFileError(
      `${REPO_CONFIG_FILE} is not valid JSON: fix it, or save the form to replace it.`,
    );
  }
  const parsed = repoConfigSchema.safeParse(json);
  if (!parsed.success) {
    const issues = toWireIssues(parsed.error.issues);
    throw new RepoConfigFileError(`${REPO_CONFIG_FILE}: ${describeIssues(issues, '')}`, issues);
  }
  return parsed.data;
}

/**
 * What is wrong with the repository's `.flowsync/repo-config.json` as it is on disk now, in the words the window
 * shows; null when it is valid or absent. `status` and `start` read it so, with or without a running agent.
 */
export function repoConfigProblem(root: string): string | null {
  try {
    readRepoConfigFile(root);
    return null;
  } catch (error) {
    if (error instanceof RepoConfigFileError) return error.message;
    // The repository's folder not there or not readable (a drive not mounted): its own state says that (`missing`),
    // not its config file; `status` crashed on it.
    if ((error as NodeJS.ErrnoException).code !== undefined) return null;
    throw error;
  }
}

/** `.flowsync` as a link (or a FIFO…) would lead reads and writes out of the repository: refused, by name. */
function refuseLinkedFolder(root: string): void {
  const outside = notRealFolder(root, dirname(REPO_CONFIG_FILE));
  if (outside && outside.kind !== 'missing') throw notPlainFolder(outside);
}

function notPlainFolder(outside: NotContained): RepoConfigFileError {
  if (outside.kind === 'unreadable') {
    return new RepoConfigFileError(
      `${outside.path} could not be read (${outside.code ?? 'EIO'}): check its permissions, then save again.`,
    );
  }
  return new RepoConfigFileError(
    `${outside.path} is not a plain folder (${outside.kind}): flowsync neither reads nor writes through it.`,
  );
}

/**
 * Writes the file atomically (a crash leaves the old file or the new one, never half of one) under the containment
 * rule: never through a link the repository ships, at `.flowsync`, at the file's name or at a temporary name
 * (writeContained). A save once wrote `.flowsync/repo-config.json.<pid>.tmp` through a link planted there, over
 * ~/.bashrc (issue 20).
 */
export function writeRepoConfigFile(root: string, config: RepoConfig): string {
  const outside = writeContained(root, REPO_CONFIG_FILE, `${JSON.stringify(config, null, 2)}\n`);
  if (outside) throw notPlainFolder(outside);
  return join(root, REPO_CONFIG_FILE);
}

/**
 * Pushes a hand edit of `.flowsync/repo-config.json` to the service, as a save from the window would (docs/architecture.md, "Repository config"):
 * looked at once a second, sent when it changed and is valid. An invalid file is reported, not sent; a service
 * that cannot be reached gets it at the next look.
 */
export class RepoConfigFilePublisher {
  private seen = '';
  /** What is wrong with the file, which waits for its user to fix it (needsOf); null when nothing is. */
  problem: string | null = null;
  /** Why the valid file is not on the service yet (sent again at the next look); null when it is. */
  unsent: string | null = null;

  constructor(
    private readonly root: string,
    private readonly owner: string,
    private readonly name: string,
    private readonly client: RemoteClient,
  ) {}

  async check(): Promise<void> {
    const stat = lstatSync(join(this.root, REPO_CONFIG_FILE), { throwIfNoEntry: false });
    const signature = stat ? `${stat.mtimeMs}:${stat.size}` : '';
    if (signature === this.seen) return;
    if (!stat) {
      this.seen = signature;
      this.problem = null;
      this.unsent = null;
      return;
    }
    let config: RepoConfig | null;
    try {
      config = readRepoConfigFile(this.root);
    } catch (error) {
      this.seen = signature;
      this.problem = error instanceof Error ? error.message : String(error);
      this.unsent = null;
      return;
    }
    this.problem = null;
    if (config === null) return;
    try {
      await this.client.repoConfig.update({ owner: this.owner, name: this.name, ...config });
      this.seen = signature;
      this.unsent = null;
    } catch (error) {
      this.unsent = `${REPO_CONFIG_FILE} not sent yet: ${error instanceof Error ? error.message : String(error)}`;
    }
  }
}
