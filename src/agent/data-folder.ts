import { closeSync, openSync, rmSync, writeSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { ensurePrivateFolder, storageFaultOf, type StorageFault } from '../service/index.ts';
import { defaultStatePath } from './paths.ts';

/**
 * Whether flowsync's data folder takes a write now (a byte written and removed): null, or what is wrong with it.
 * The lock, the state, the logs and the embedded service's database all live there.
 */
export function dataFolderFault(
  folder = dirname(defaultStatePath()),
): { fault: StorageFault; folder: string } | null {
  const probe = join(folder, `.write-check-${process.pid}`);
  try {
    ensurePrivateFolder(folder);
    const fd = openSync(probe, 'w', 0o600);
    try {
      writeSync(fd, 'x');
    } finally {
      closeSync(fd);
    }
    rmSync(probe, { force: true });
    return null;
  } catch (error) {
    const fault = storageFaultOf(error);
    if (fault === null) throw error;
    try {
      rmSync(probe, { force: true }); // created before the write failed (a full disk)
    } catch {
      // Read-only: it was never created.
    }
    return { fault, folder };
  }
}
