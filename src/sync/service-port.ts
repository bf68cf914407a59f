import type { RemoteClient } from '../client/index.ts';
import type { FlowLayout } from './flow-layout.ts';
import type { MeSource } from './reconcile.ts';
import type { IgnoreRules } from './ignore-rules.ts';
import type { RootGuard } from './root-guard.ts';
import type { DeletionGuard } from './safety.ts';
import type { Scheduler } from './scheduler.ts';
import type { FlowFile } from './state-deletions.ts';
import type { SyncState } from './state.ts';

/** What the service side needs of the engine that owns it. */
export interface ServicePort {
  state: SyncState;
  client: RemoteClient;
  repoId: number;
  repo: MeSource & { root: string; owner: string; name: string; deletionGuard?: DeletionGuard | null };
  layout: FlowLayout;
  guard: RootGuard;
  rules: IgnoreRules;
  /** The engine's one queue: a write of the state that must not interleave with a round. */
  scheduler: Pick<Scheduler, 'run' | 'want'>;
  /** The status changed: the engine says it again. */
  refresh(): void;
  /** Held deletions were put back on disk: none is held now. */
  clearHeld(): void;
  /** Its user's word on these deletions: sent in rounds, how many the service took (SyncEngine.sendHeldDeletions). */
  sendDeletions(files: readonly FlowFile[]): Promise<number>;
  /** Writers the service named (a listing): another's makes the repository shared (git-motions.ts). */
  sawWriters(writers: readonly (string | null)[]): void;
}
