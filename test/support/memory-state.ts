import { afterEach, beforeEach } from 'vitest';
import { SyncState } from '../../src/sync/index.ts';

/** A state in memory with one repository, as the tests of the state's own rules make it. */
export interface MemoryState {
  readonly state: SyncState;
  readonly repoId: number;
  /** A file found on disk, with this local hash. */
  local(flowPath: string, path: string, localHash?: string): void;
  /** A file the service acknowledged with this hash (and id). */
  ack(flowPath: string, path: string, hash: string, fileId?: string | null): void;
}

/**
 * A state in memory with one repository, made before each test of the describe that calls this and closed after it:
 * the set-up that the counts', the planner's and the aggregates' tests each wrote out.
 */
export function memoryStateEachTest(): MemoryState {
  let state: SyncState;
  let repoId: number;
  beforeEach(() => {
    state = new SyncState(':memory:');
    repoId = state.ensureRepo('/r', 'http://svc', 'acme', 'app');
  });
  afterEach(() => state.close());
  return {
    get state() {
      return state;
    },
    get repoId() {
      return repoId;
    },
    local: (flowPath, path, localHash = 'disk') =>
      state.saveLocal(repoId, [{ flowPath, path, size: 1, mtimeMs: 1, localHash, warning: null }]),
    ack: (flowPath, path, hash, fileId = null) =>
      state.acknowledge(repoId, [{ flowPath, stored: [{ path, hash, fileId }], dropped: [] }]),
  };
}
