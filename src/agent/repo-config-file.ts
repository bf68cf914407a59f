import { lstatSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { repoConfigConflictOf, RepoConfigTooLargeError, type RemoteClient } from '../client/index.ts';
import {
  FILE_WARNINGS,
  MAX_FILE_BYTES,
  MAX_JSON_DEPTH,
  configOfRecord,
  describeFileWarning,
  describeIssues,
  findDeepNesting,
  repoConfigHashInput,
  repoConfigSchema,
  toWireIssues,
  type RepoConfig,
  type RepoConfigCurrent,
  type RepoConfigRecord,
  type WireIssue,
} from '../protocol/index.ts';
import {
  notRealFolder,
  readContained,
  writeContained,
  type NotContained,
  type RepoConfigBase,
} from '../sync/index.ts';
import { repoConfigSave, repoConfigStep } from './repo-config-step.ts';
import { writerName } from './writer.ts';

// node:crypto loaded at its first use, not with this module: `flowsync status` loads the module and never uses it,
// and loading node:crypto costs a process 22 million instructions (about 15 ms).
const createHash = (algorithm: string) => process.getBuiltinModule('node:crypto').createHash(algorithm);

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
 * ~/.bashrc.
 */
export function writeRepoConfigFile(root: string, config: RepoConfig): string {
  const outside = writeContained(root, REPO_CONFIG_FILE, repoConfigText(config));
  if (outside) throw notPlainFolder(outside);
  return join(root, REPO_CONFIG_FILE);
}

/** The text a save writes: what the file holds after it, byte for byte. */
function repoConfigText(config: RepoConfig): string {
  return `${JSON.stringify(config, null, 2)}\n`;
}

function hashOfBytes(bytes: string | Buffer): string {
  return createHash('sha256').update(bytes).digest('hex');
}

/** The file on disk as a screen loads it: the hash of its bytes (the base its Save is made on) and the bytes. */
export interface RepoConfigOnDisk {
  base: string;
  bytes: Buffer;
}

/**
 * `.flowsync/repo-config.json` as it is now, for the Repo config screen's base; null when there is no file of the
 * repository's there (none, or a link or a FIFO the containment rule replaces and never reads through). Its bytes
 * as they are, even invalid (a hand edit half done): they are what a save would replace. One that cannot be read
 * is an error: saving over what nobody could look at might lose it.
 */
export function repoConfigOnDisk(root: string): RepoConfigOnDisk | null {
  refuseLinkedFolder(root);
  // A hard link is read: a save replaces the name, the other names keep their content.
  const read = readContained(root, REPO_CONFIG_FILE, MAX_FILE_BYTES, undefined, true);
  if (read.missing || read.warning) return null;
  if (read.unreadable)
    throw new RepoConfigFileError(
      `${REPO_CONFIG_FILE} could not be read (${read.code}): check its permissions, then save again.`,
    );
  if (read.bytes === null)
    throw new RepoConfigFileError(
      `${REPO_CONFIG_FILE} is ${FILE_WARNINGS.oversized.reason}: make it smaller, then save again.`,
    );
  return { base: hashOfBytes(read.bytes), bytes: read.bytes };
}

/** The hash a repository config is kept and sent under (SHA-256 of repoConfigHashInput, as the service's). */
export function repoConfigHash(config: RepoConfig): string {
  return createHash('sha256').update(repoConfigHashInput(config)).digest('hex');
}

/** The hash of a config file's text, or null when it is not a valid config. */
function hashOfText(text: string): string | null {
  try {
    const parsed = repoConfigSchema.safeParse(JSON.parse(text));
    return parsed.success ? repoConfigHash(parsed.data) : null;
  } catch {
    return null;
  }
}

/** What a save from the screen did: `fileChanged` set when the file changed since it loaded, and nothing was saved. */
export interface RepoConfigSaved {
  path: string;
  record: RepoConfigRecord | null;
  /** The file as it is now (`now` null: deleted) when it changed since the screen loaded it; else null. */
  fileChanged: { now: RepoConfigOnDisk | null } | null;
  keptAs: string | null;
}

/** `.flowsync/repo-config.json changed on the service by bob@host:~/app at …`: one line, for status and the terminal. */
export function repoConfigConflictLine(current: RepoConfigCurrent): string {
  const who = current.written_by ? ` by ${current.written_by}` : '';
  return (
    `${REPO_CONFIG_FILE} changed on the service${who} at ${current.updated_at}: yours is not sent; ` +
    "choose in Repo config (take the service's, or keep yours)"
  );
}

/**
 * Keeps `.flowsync/repo-config.json` and the service's copy of it in step, with a base as a flow's files have one
 * (docs/architecture.md, "Repository config"): a hand edit is looked at once a second and sent, on the base this
 * checkout last synced, when it changed and is valid; a save from the window is sent the same way. To a service
 * that takes bases (capabilities `repo_config_bases`), a teammate's newer config is a conflict, kept in the state
 * and shown, never overwritten; its user takes the service's or keeps theirs. A service of the spec alone takes the
 * last writer's (said once, in the service-limits line). An invalid file is reported, not sent; a service that
 * cannot be reached gets it at the next look.
 */
export class RepoConfigFilePublisher {
  private seen = '';
  /** What is wrong with the file, which waits for its user to fix it (needsOf); null when nothing is. */
  problem: string | null = null;
  /** Why the valid file is not on the service yet (sent again at the next look); null when it is. */
  unsent: string | null = null;
  /**
   * What reads the file and sends it runs one at a time: the look (once a second) and a save from the window, side
   * by side, sent on the same base, and the second to arrive met the first, this checkout's own, as a teammate's
   * conflict (test/agent/repo-config-one-at-a-time.test.ts).
   */
  private turn: Promise<unknown> = Promise.resolve();

  constructor(
    private readonly root: string,
    private readonly owner: string,
    private readonly name: string,
    private readonly client: RemoteClient,
    private readonly synced: RepoConfigBase,
    /** Whether the service takes a base for the config (null: not known yet); without one, the last writer wins. */
    private readonly takesBases: () => Promise<boolean | null>,
    /** Told once per conflict: the line the terminal prints. */
    private readonly announce: (line: string) => void = () => undefined,
  ) {
    const standing = synced.conflict();
    if (standing) this.problem = repoConfigConflictLine(standing);
  }

  check(): Promise<void> {
    return this.inTurn(() => this.look());
  }

  private async look(): Promise<void> {
    const stat = lstatSync(join(this.root, REPO_CONFIG_FILE), { throwIfNoEntry: false });
    const signature = stat ? `${stat.mtimeMs}:${stat.size}` : '';
    if (signature === this.seen) return;
    if (!stat) {
      this.seen = signature;
      this.problem = this.conflictLine();
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
    this.problem = this.conflictLine();
    if (config === null) return;
    const hash = repoConfigHash(config);
    const step = repoConfigStep(hash, this.synced.base(), this.synced.conflict()?.hash ?? null);
    if (step === 'send') {
      try {
        await this.send(config, this.synced.base());
      } catch (error) {
        // The service's config is over the cap: the same file sent again gets the same answer (up to the client's
        // 128 MiB, at every look, once a second), so it is not sent again until it changes. Its user is told.
        if (error instanceof RepoConfigTooLargeError) {
          this.seen = signature;
          this.problem = error.message;
          this.unsent = null;
          return;
        }
        // Valid and not on the service yet (offline): sent again at the next look, not a problem for its user.
        this.unsent = `${REPO_CONFIG_FILE} not sent yet: ${error instanceof Error ? error.message : String(error)}`;
        return;
      }
    } else if (step === 'settled') {
      this.synced.synced(hash);
    }
    this.seen = signature;
    this.unsent = null;
    this.problem = this.conflictLine();
  }

  /**
   * A save from the Repo config screen, made on the file as it loaded it (`loaded`, the hash of its bytes; null: no
   * file then). A file changed on disk since (a hand edit) is neither written over nor sent: `fileChanged` says what
   * it holds now, for its user to choose. Else sent on the base last synced, then written to the file: a teammate's
   * conflict on the service keeps it on disk (nothing of its user's is lost) and unsent; any other failure saves
   * nothing anywhere. `takeMine`: the user chose the screen's over the file the conflict showed (`loaded` its hash):
   * the file's content is kept beside it first (`keptAs`), as "Take the service's" keeps this checkout's.
   */
  save(
    config: RepoConfig,
    loaded: string | null,
    takeMine = false,
    now = new Date(),
  ): Promise<RepoConfigSaved> {
    return this.inTurn(() => this.saveNow(config, loaded, takeMine, now));
  }

  private async saveNow(
    config: RepoConfig,
    loaded: string | null,
    takeMine: boolean,
    now: Date,
  ): Promise<RepoConfigSaved> {
    const path = join(this.root, REPO_CONFIG_FILE);
    const mine = hashOfBytes(repoConfigText(config));
    const before = repoConfigOnDisk(this.root);
    const step = repoConfigSave(loaded, before?.base ?? null, mine, takeMine);
    if (step === 'file-changed') return { path, record: null, fileChanged: { now: before }, keptAs: null };
    const answer = await this.send(config, this.synced.base());
    // Edited by hand while the service answered: the file is still not written over (the next look sends it).
    const after = repoConfigOnDisk(this.root);
    if ((after?.base ?? null) !== (before?.base ?? null) && after?.base !== mine)
      return { path, record: null, fileChanged: { now: after }, keptAs: null };
    const keptAs = step === 'save-keeping-the-file' && before ? this.keepBeside(before.bytes, now) : null;
    writeRepoConfigFile(this.root, config);
    return { path, record: 'record' in answer ? answer.record : null, fileChanged: null, keptAs };
  }

  /**
   * Take the file's: the screen's unsaved config is not lost by the click either; kept beside the file, the file
   * untouched. Returns where it was kept.
   */
  keepScreens(config: RepoConfig, now = new Date()): string {
    refuseLinkedFolder(this.root);
    return this.keepBeside(repoConfigText(config), now);
  }

  /** The conflict standing, if any: the service's config, who wrote it and when. */
  conflict(): RepoConfigCurrent | null {
    return this.synced.conflict();
  }

  /**
   * Take the service's: its config written to the file (by the containment rule), and synced as the new base. The
   * file's own config, when it differs, is kept first beside it (`repo-config.json.conflict-<time>`): a click never
   * loses an edit. Returns where it was kept, or null.
   */
  takeService(now = new Date()): Promise<string | null> {
    return this.inTurn(async () => this.takeServiceNow(now));
  }

  private takeServiceNow(now: Date): string | null {
    const current = this.requireConflict();
    const theirs = configOfRecord(current);
    const mine = repoConfigOnDisk(this.root);
    const keptAs =
      mine && hashOfText(mine.bytes.toString('utf8')) !== current.hash
        ? this.keepBeside(mine.bytes, now)
        : null;
    writeRepoConfigFile(this.root, theirs);
    this.synced.synced(current.hash);
    this.problem = null;
    return keptAs;
  }

  /** Keep mine: the file's config sent on top of the service's (its hash the base); a newer one is a new conflict. */
  keepMine(): Promise<void> {
    return this.inTurn(() => this.keepMineNow());
  }

  private async keepMineNow(): Promise<void> {
    const current = this.requireConflict();
    const config = readRepoConfigFile(this.root);
    if (config === null)
      throw new RepoConfigFileError(
        `${REPO_CONFIG_FILE} is not there: save the form, or take the service's.`,
      );
    await this.send(config, current.hash);
  }

  /** `work` once what runs before it has ended (failed or not). */
  private inTurn<T>(work: () => Promise<T>): Promise<T> {
    const done = this.turn.then(() => work());
    this.turn = done.catch(() => undefined);
    return done;
  }

  /** A copy beside the file (`repo-config.json.conflict-<time>`), by the containment rule; returns its name. */
  private keepBeside(bytes: string | Buffer, now: Date): string {
    const keptAs = `${REPO_CONFIG_FILE}.conflict-${now.toISOString().replaceAll(':', '-')}`;
    const outside = writeContained(this.root, keptAs, bytes);
    if (outside) throw notPlainFolder(outside);
    return keptAs;
  }

  private requireConflict(): RepoConfigCurrent {
    const current = this.synced.conflict();
    if (!current) throw new RepoConfigFileError(`${REPO_CONFIG_FILE} is in no conflict with the service.`);
    return current;
  }

  private conflictLine(): string | null {
    const current = this.synced.conflict();
    return current ? repoConfigConflictLine(current) : null;
  }

  private async send(
    config: RepoConfig,
    base: string | null,
  ): Promise<{ record: RepoConfigRecord } | { conflict: RepoConfigCurrent }> {
    const bases = await this.takesBases();
    // Not known whether it takes a base: sent later rather than over a teammate's config.
    if (bases === null) throw new Error('the service has not answered yet');
    try {
      const record = await this.client.repoConfig.update(
        {
          owner: this.owner,
          name: this.name,
          ...config,
          ...(bases === true && { base_hash: base }),
        },
        // Named as a flow's writes are: the conflict a teammate gets says who.
        { writer: writerName(this.root) },
      );
      this.synced.synced(repoConfigHash(config));
      this.problem = null;
      return { record };
    } catch (error) {
      const current = repoConfigConflictOf(error);
      if (!current) throw error;
      this.synced.recordConflict(current);
      this.problem = repoConfigConflictLine(current);
      this.announce(this.problem);
      return { conflict: current };
    }
  }
}
