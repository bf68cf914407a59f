import { lstatSync, opendirSync } from 'node:fs';
import { join } from 'node:path';

/**
 * Says which flow roots may lose files now. A flow root that is absent, empty, or on another device than when it
 * was last seen with files, while the service has files of it, is held: nothing under it is taken as gone, and
 * no deletion of it is sent. An unmounted drive leaves an empty mount point (all 499 files were deleted within
 * 31 ms), a checkout of a branch without `flows/` takes the folder away (everything deleted in 0.5 s); neither
 * says the user deleted those flows. Deletions are sent only for files seen gone while their root is present,
 * not empty, and on the same device. Emptying a flow root on purpose is held too, and says so (#17 will let the
 * user confirm it).
 */
export class RootGuard {
  /** Held roots, each with the message that says why and what happens next. */
  readonly held = new Map<string, string>();
  /** The device each root was on when last seen present with entries. */
  private readonly devices = new Map<string, number>();

  constructor(
    private readonly repoRoot: string,
    private readonly roots: readonly string[],
    /** Whether the service has acknowledged files below this root (else there is nothing to hold). */
    private readonly hasAcknowledged: (root: string) => boolean,
  ) {}

  /** Looks at every root now; returns whether any is held. */
  checkAll(): boolean {
    for (const root of this.roots) this.check(root);
    return this.held.size > 0;
  }

  /** Looks at one root now; returns the message when it is held, null when it may lose files. */
  check(root: string): string | null {
    const message = this.look(root);
    if (message === null) this.held.delete(root);
    else this.held.set(root, message);
    return message;
  }

  /** The root a repository path is under, if it is held now (as last checked). */
  holds(repoPath: string): boolean {
    for (const root of this.held.keys())
      if (repoPath === root || repoPath.startsWith(`${root}/`)) return true;
    return false;
  }

  private look(root: string): string | null {
    const absolute = join(this.repoRoot, root);
    let stat;
    try {
      stat = lstatSync(absolute);
    } catch {
      // Gone, or not looked at (EACCES: the scan marks it unreadable, which deletes nothing either).
      return this.hasAcknowledged(root)
        ? `${absolute} is not there (a drive not mounted, another branch?): ${HELD}`
        : null;
    }
    // A link or a file where the root was: the containment rule reports it, not this.
    if (!stat.isDirectory()) return null;
    const device = this.devices.get(root);
    if (device !== undefined && device !== stat.dev)
      return `${absolute} is on another drive than before: ${HELD}; pause and resume the repository to sync this one`;
    let empty: boolean;
    try {
      // Its first entry only: asked each second, a listing of the whole root (1,000 flows) was most of what the
      // agent did at rest.
      const folder = opendirSync(absolute, { bufferSize: 1 });
      try {
        empty = folder.readSync() === null;
      } finally {
        folder.closeSync();
      }
    } catch {
      return null; // unreadable: the scan holds what is below it
    }
    if (empty) return this.hasAcknowledged(root) ? `${absolute} is empty: ${HELD}` : null;
    this.devices.set(root, stat.dev);
    return null;
  }
}

const HELD = 'nothing is deleted on the service until it is back';
