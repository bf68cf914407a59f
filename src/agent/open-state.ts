import { openSyncState, type SyncState } from '../sync/index.ts';
import { notice } from './notice.ts';

/** The state file, rebuilt from scratch when it cannot be read, and the person told where the old one went. */
export function openState(path: string): SyncState {
  const { state, setAside, damage } = openSyncState(path);
  if (setAside !== null) {
    notice(
      `the state database could not be read (${damage}); moved it to ${setAside}. ` +
        'The next sync re-checks every file with the service.',
    );
  }
  return state;
}
