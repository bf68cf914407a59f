import { setTimeout as sleep } from 'node:timers/promises';
import type { FlowLayout } from './flow-layout.ts';
import { gitMotionOf, holdsGitMotions, isOtherWriter, type GitTrail } from './git-motion.ts';
import type { SyncState } from './state.ts';
import type { CandidateFile, GitChangeSet, GitLeftFile } from './state-motions.ts';

/**
 * What the engine asks of git, given by its owner (the agent reads `.git`, src/agent/git-trail.ts): sync does not run
 * git itself. `trail` is a few small reads of git's folder; `differFromHead` one git call for a whole batch.
 */
export interface GitPort {
  /** What git left in its folder now (the reflogs' newest entries, the index's time, its lock, the branch). */
  trail(): GitTrail;
  /** Of these files (relative to the repository's root), those whose disk differs from HEAD's tree. */
  differFromHead(repoPaths: readonly string[]): Promise<Set<string>>;
}

/** A change set of git's held for its user, with its files. */
export interface HeldChangeSet {
  name: string;
  changed: number;
  deleted: number;
  files: { flowPath: string; path: string; deleted: boolean }[];
}

/** What the change sets need of the engine. */
export interface MotionsPort {
  state: SyncState;
  repoId: number;
  layout: FlowLayout;
  /** The repository's setting: git's motions asked about (default) or sent as edits. */
  setting: 'ask' | 'send';
  git: GitPort | undefined;
  /** This checkout's writer name, as the service names it. */
  me: string | undefined;
  /** Something the status shows changed. */
  refresh(): void;
}

/** How long a batch waits at most for git to finish (its index lock) before it is taken as it stands. */
const WAIT_FOR_GIT_MS = 5000;

/**
 * Git's motions held, not sent: each batch the watcher reports is looked at once it is recorded; the
 * changes of it that git made (git-motion.ts's rule) are marked held in the state (state-motions.ts), which keeps
 * them out of every round until their user sends them (`sync --yes`, "Send to the team") or keeps them here.
 */
export class GitMotions {
  constructor(private readonly port: MotionsPort) {}

  /** The other writers the service named for this repository: its teammates, as far as seen. */
  get teammates(): string[] {
    return this.port.state.gitHeld.sharedWith(this.port.repoId);
  }

  /** Whether git's motions wait for their user here now. */
  get holding(): boolean {
    return (
      this.port.git !== undefined &&
      holdsGitMotions({ setting: this.port.setting, shared: this.teammates.length > 0 })
    );
  }

  /** Writers the service named (a listing, a refusal): the others among them make the service shared. */
  noteWriters(writers: readonly (string | null)[]): void {
    const others = writers.filter((writer): writer is string => isOtherWriter(writer, this.port.me));
    if (others.length > 0) this.port.state.gitHeld.noteWriters(this.port.repoId, others);
  }

  /** The change sets as they stand (marks of files no longer as git left them dropped). */
  changeSets(): GitChangeSet[] {
    return this.port.state.gitHeld.look(this.port.repoId);
  }

  /**
   * A batch of paths (relative to the repository) was recorded, seen at `seenAt`: the changes git made among them
   * are held. Waits while git holds its index lock (its files are not all written), at most WAIT_FOR_GIT_MS.
   */
  async look(repoPaths: Iterable<string>, seenAt: number): Promise<void> {
    const { git, state, repoId } = this.port;
    if (git === undefined || !this.holding) return;
    const places = [...repoPaths];
    for (const started = Date.now(); ;) {
      const candidates = this.candidates(places);
      if (candidates.length === 0) return;
      const trail = git.trail();
      const repoPath = (file: CandidateFile) => `${file.flowPath}/${file.path}`;
      const differ = await git.differFromHead(candidates.map(repoPath));
      const motion = gitMotionOf({
        trail,
        seenAt,
        now: Date.now(),
        files: candidates.map((file) => ({ path: repoPath(file), equalsHead: !differ.has(repoPath(file)) })),
      });
      if (motion.kind === 'wait' && Date.now() - started < WAIT_FOR_GIT_MS) {
        await sleep(motion.ms);
        continue;
      }
      if (motion.kind !== 'git') return;
      const gits = new Set(motion.files);
      state.gitHeld.hold(
        repoId,
        motion.name,
        candidates
          .filter((file) => gits.has(repoPath(file)))
          .map(({ flowPath, path, localHash }) => ({ flowPath, path, hash: localHash })),
      );
      this.port.refresh();
      return;
    }
  }

  /**
   * Its user's word on the change set `name` held (null: every one): send it to the team, or keep it here. Returns
   * what was decided.
   */
  decide(decision: 'confirmed' | 'kept', name: string | null = null): GitChangeSet[] {
    return this.setsOf(this.port.state.gitHeld.decide(this.port.repoId, decision, name));
  }

  /** The change sets held, each with its files as git left them (`deleted`: git removed it): what a card lists. */
  heldSets(): HeldChangeSet[] {
    const sets = new Map<string, HeldChangeSet>();
    for (const { name, flowPath, path, hash } of this.port.state.gitHeld.heldFiles(this.port.repoId)) {
      const set = sets.get(name) ?? { name, changed: 0, deleted: 0, files: [] };
      if (hash === null) set.deleted++;
      else set.changed++;
      set.files.push({ flowPath, path, deleted: hash === null });
      sets.set(name, set);
    }
    return [...sets.values()];
  }

  /** The change sets these files make up (after a decision: what it was about). */
  setsOf(files: readonly GitLeftFile[]): GitChangeSet[] {
    this.port.refresh();
    const sets = new Map<string, GitChangeSet>();
    for (const file of files) {
      const set = sets.get(file.name) ?? { name: file.name, changed: 0, deleted: 0, decision: 'held' };
      if (file.hash === null) set.deleted++;
      else set.changed++;
      sets.set(file.name, set);
    }
    return [...sets.values()];
  }

  /** The changes waiting to be sent at or below each path: those git may have made. */
  private candidates(places: readonly string[]): CandidateFile[] {
    const { state, repoId, layout } = this.port;
    const found = new Map<string, CandidateFile>();
    for (const place of places) {
      const located = layout.locate(place);
      const files = state.gitHeld.candidates(repoId, located ?? { folder: place });
      for (const file of files) found.set(`${file.flowPath}\0${file.path}`, file);
    }
    return [...found.values()];
  }
}
