import { join } from 'node:path';
import { createClient, type RemoteClient } from '../../src/client/index.ts';
import { Hasher, SyncEngine, SyncState, type SyncReport } from '../../src/sync/index.ts';
import type { TestRepo } from './repo.ts';

export interface EngineHarness {
  engine: SyncEngine;
  state: SyncState;
  client: RemoteClient;
  reports: SyncReport[];
  close(): Promise<void>;
}

/** A real engine on a real repository folder, talking over HTTP to `url`, with test-sized back-off. */
export function startEngine(
  repo: TestRepo,
  url: string,
  userToken: string,
  flowRoots = ['flows'],
): EngineHarness {
  const client = createClient({ baseUrl: url, auth: { userToken }, retry: { attempts: 1 } });
  const state = new SyncState(join(repo.dir, 'state.db'));
  const hasher = new Hasher();
  const engine = new SyncEngine({
    repo: { root: repo.root, owner: 'acme', name: 'app', flowRoots },
    client,
    state,
    hasher,
    serviceKey: url,
    retryBaseMs: 50,
    retryMaxMs: 300,
    presenceIntervalMs: 100,
  });
  const reports: SyncReport[] = [];
  engine.on('synced', (report) => reports.push(report));
  return {
    engine,
    state,
    client,
    reports,
    async close() {
      await engine.stop();
      await hasher.close();
      await client.close();
      state.close();
    },
  };
}
