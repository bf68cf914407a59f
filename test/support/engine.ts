import { join } from 'node:path';
import { createClient, type RemoteClient } from '../../src/client/index.ts';
import {
  Hasher,
  SyncEngine,
  SyncState,
  type SyncEngineOptions,
  type SyncReport,
} from '../../src/sync/index.ts';
import type { TestRepo } from './repo.ts';

export interface EngineHarness {
  engine: SyncEngine;
  state: SyncState;
  client: RemoteClient;
  reports: SyncReport[];
  close(): Promise<void>;
}

export interface EngineSetup {
  root: string;
  statePath: string;
  url: string;
  userToken: string;
  owner?: string;
  name?: string;
  flowRoots?: string[];
  /** Client retries and engine timings; defaults are the product's. */
  clientAttempts?: number;
  timings?: Pick<SyncEngineOptions, 'retryBaseMs' | 'retryMaxMs' | 'presenceIntervalMs' | 'rescanIntervalMs'>;
  /** The folders the engine may watch (default: the process's budget). */
  watchBudget?: SyncEngineOptions['watchBudget'];
}

/** A real engine (client, state file, hasher pool) on a real folder, talking over HTTP to a service. */
export function createEngine(setup: EngineSetup): EngineHarness {
  const client = createClient({
    baseUrl: setup.url,
    auth: { userToken: setup.userToken },
    ...(setup.clientAttempts !== undefined && { retry: { attempts: setup.clientAttempts } }),
  });
  const state = new SyncState(setup.statePath);
  const hasher = new Hasher();
  const engine = new SyncEngine({
    repo: {
      root: setup.root,
      owner: setup.owner ?? 'acme',
      name: setup.name ?? 'app',
      flowRoots: setup.flowRoots ?? ['flows'],
    },
    client,
    state,
    hasher,
    serviceKey: setup.url,
    ...setup.timings,
    watchBudget: setup.watchBudget,
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

/** The engine of a test repository as acme/app, with test-sized back-off so outages resolve in milliseconds. */
export function startEngine(
  repo: TestRepo,
  url: string,
  userToken: string,
  flowRoots = ['flows'],
): EngineHarness {
  return createEngine({
    root: repo.root,
    statePath: join(repo.dir, 'state.db'),
    url,
    userToken,
    flowRoots,
    clientAttempts: 1,
    timings: { retryBaseMs: 50, retryMaxMs: 300, presenceIntervalMs: 100 },
  });
}
