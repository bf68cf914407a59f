import { folderFault, storageFaultOf, type StorageFault } from '../host/index.ts';
import { storageMessage } from './engine-status.ts';
import type { Reconciler } from './reconciler.ts';
import type { RoundOutcome } from './scheduler.ts';

/**
 * The state refusing a write (a full disk, a read-only data folder), and what waits meanwhile: the files changed
 * since that the state could not record are counted from the disk, so the status says how many changes wait.
 */
export class StateFaults {
  /** Files changed that the state could not record; `counting` while a count runs. */
  private unrecorded = { files: 0, counting: false };

  constructor(
    private readonly folder: string,
    private readonly reconciler: Reconciler,
    private readonly pending: () => number,
  ) {}

  /** Files that wait without a record in the state. */
  get files(): number {
    return this.unrecorded.files;
  }

  /** A full rescan went through: every file is recorded now. */
  recorded(): void {
    this.unrecorded.files = 0;
  }

  /**
   * Whether the state refused a write (SQLITE_FULL, SQLITE_READONLY…, or a file of the data folder: ENOSPC,
   * EROFS…). Then nothing it should have recorded can be trusted to be there: a full rescan is due before the next
   * round sends anything (SQLite rolled the transaction back, so what was not recorded is still pending or
   * unknown; an acknowledgement not recorded is sent again, and the service answers "unchanged"). Returns the
   * fault, null when it is not one; the caller sets it with the 'storage' phase.
   */
  refused(error: unknown): StorageFault | null {
    const fault = storageFaultOf(error);
    if (fault === null) return null;
    const code = String((error as { code?: unknown }).code);
    const path = (error as { path?: unknown }).path;
    const inDataFolder =
      code.startsWith('SQLITE_') || (typeof path === 'string' && path.startsWith(`${this.folder}/`));
    if (!inDataFolder) return null; // a repository's file that could not be read is not the state's fault
    this.reconciler.fullRescanDue = true;
    // SQLite says only "disk I/O error" when the folder turned read-only under it: the folder says which.
    return fault === 'failing' ? (folderFault(this.folder) ?? fault) : fault;
  }

  /** Counts what the state could not record, one count at a time (a burst of bursts needs only the last). */
  async count(): Promise<void> {
    if (this.unrecorded.counting) return;
    this.unrecorded.counting = true;
    try {
      this.unrecorded.files = await this.reconciler.countUnrecorded();
    } catch {
      // The count is what was known before: the scan that failed is retried with the round.
    } finally {
      this.unrecorded.counting = false;
    }
  }

  /** A round's end when the state refused a write: wait (the work stays), counting what waits. */
  async outcome(fault: StorageFault): Promise<RoundOutcome> {
    await this.count();
    return {
      kind: 'refused',
      phase: 'storage',
      message: storageMessage(fault, this.folder, this.pending() + this.unrecorded.files),
      fault,
    };
  }
}
