import type { SyncReport } from '../sync/index.ts';
import { currentBranch } from './git.ts';

/** A checkout's HEAD moved between two rounds, and what the round that followed did: one line, not one per file. */
export interface BranchSwitch {
  /** The branch before and after (`main`, `detached at 1a2b3c4`); null outside a git repository. */
  from: string | null;
  to: string | null;
  /** Files the service created, updated or deleted. */
  changed: number;
  /** Deletions held for their user when the round ended (a switch that removes many files). */
  heldDeletions: number;
  conflicts: number;
  refused: number;
}

/**
 * Follows the branch of one checkout from round to round. A switch is noticed when a round is under way (git
 * writes HEAD after the files, so by the time their changes make a round HEAD has moved) and ends when the engine
 * rests again: its rounds are summed, with the deletions held at the end. A HEAD moved with no file changed
 * (`git switch -c`) is said with the next round.
 */
export class BranchFollower {
  private at: string | null;
  private open: BranchSwitch | null = null;

  constructor(private readonly root: string) {
    this.at = currentBranch(root);
  }

  /** The branch now (read afresh: 0.02 ms). */
  get branch(): string | null {
    return currentBranch(this.root);
  }

  /** Whether a switch is being summed: its rounds are not said one by one. */
  get switching(): boolean {
    return this.open !== null;
  }

  /** A round runs (`report` null) or sent something. */
  round(report: SyncReport | null): void {
    const now = currentBranch(this.root);
    if (this.open === null && now === this.at) return;
    this.open ??= { from: this.at, to: now, changed: 0, heldDeletions: 0, conflicts: 0, refused: 0 };
    this.open.to = now;
    if (!report) return;
    this.open.changed += report.created + report.updated + report.deleted;
    this.open.conflicts += report.conflicts.length;
    this.open.refused += report.rejected.length;
  }

  /** The engine rests after its rounds: the switch they followed, once (null when there was none). */
  rested(heldDeletions: number): BranchSwitch | null {
    const done = this.open;
    if (!done) return null;
    this.open = null;
    this.at = done.to;
    return { ...done, heldDeletions };
  }
}
