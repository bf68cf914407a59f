import { dirname } from 'node:path';
import { folderFault, type StorageFault } from './storage-fault.ts';
import { defaultStatePath } from './paths.ts';

/**
 * Whether flowsync's data folder takes a write now: null, or what is wrong with it. The lock, the state, the logs
 * and the embedded service's database all live there.
 */
export function dataFolderFault(
  folder = dirname(defaultStatePath()),
): { fault: StorageFault; folder: string } | null {
  const fault = folderFault(folder);
  return fault === null ? null : { fault, folder };
}
