import { setTimeout as sleep } from 'node:timers/promises';
import { dataFolderFault } from '../host/index.ts';
import { describeStorageFault, storageFaultRemedy } from '../host/index.ts';

/** The longest wait between two looks at a data folder that cannot be written. */
const MAX_WAIT_MS = 10_000;

/**
 * Before the agent takes its lock: a data folder that cannot be written (read-only, full, not ours) is said in one
 * line with what to do, and waited for, looked at again every 1 s doubling to 10 s, until it can (or Ctrl-C).
 * Waiting, not running with the state in memory: the lock that keeps one agent per user, the state that remembers
 * what was sent but not answered (so a crash cannot leave a deleted file on the service) and the embedded service's
 * database all live in that folder; without them a second agent could run beside this one and a crash would forget
 * what was in flight.
 */
export async function waitForDataFolder(say: (line: string) => void): Promise<void> {
  let wait = 1000;
  let told = false;
  for (;;) {
    const problem = dataFolderFault();
    if (problem === null) {
      if (told) say('flowsync: the data folder can be written again; starting.');
      return;
    }
    if (!told) {
      say(
        `flowsync: ${describeStorageFault(problem.fault, problem.folder)}: flowsync keeps its state there. ` +
          `To go on, ${storageFaultRemedy(problem.fault)}; flowsync waits and starts by itself (Ctrl-C stops it).`,
      );
      told = true;
    }
    await sleep(wait);
    wait = Math.min(wait * 2, MAX_WAIT_MS);
  }
}
