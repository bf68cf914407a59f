import { join } from 'node:path';
import { createClient, type RemoteClient } from '../../src/client/index.ts';
import type { ServiceOptions } from '../../src/service/index.ts';
import {
  Hasher,
  SyncEngine,
  SyncState,
  type RepositorySpec,
  type SyncEngineOptions,
  type SyncReport,
} from '../../src/sync/index.ts';
import { makeRepo, type TestRepo } from './repo.ts';
import { startTestService, type TestService } from './service.ts';

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
  /** The engine's hash workers (default: a pool of its own); closed with the engine either way. */
  hasher?: Hasher;
  /** Who writes, for the service's history (the agent names its checkout so). */
  writer?: string;
  /** When deletions are held (default: the product's); null: never. */
  deletionGuard?: RepositorySpec['deletionGuard'];
}

/** A real engine (client, state file, hasher pool) on a real folder, talking over HTTP to a service. */
export function createEngine(setup: EngineSetup): EngineHarness {
  const client = createClient({
    baseUrl: setup.url,
    auth: { userToken: setup.userToken },
    ...(setup.clientAttempts !== undefined && { retry: { attempts: setup.clientAttempts } }),
  });
  const state = new SyncState(setup.statePath);
  const hasher = setup.hasher ?? new Hasher();
  const engine = new SyncEngine({
    repo: {
      root: setup.root,
      owner: setup.owner ?? 'acme',
      name: setup.name ?? 'app',
      flowRoots: setup.flowRoots ?? ['flows'],
      ...(setup.deletionGuard !== undefined && { deletionGuard: setup.deletionGuard }),
      // Named as the agent names every checkout (the service's history, and what a lost answer stored, need it).
      writer: setup.writer ?? `test@flowsync:${setup.root}`,
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
  let closing: Promise<void> | null = null;
  return {
    engine,
    state,
    client,
    reports,
    // Once: a test that stops its engine early (a restart) leaves the fixture's cleanup nothing to do twice.
    close: () =>
      (closing ??= (async () => {
        await engine.stop();
        await hasher.close();
        await client.close();
        state.close();
      })()),
  };
}

/** One client attempt, and back-off and presence in milliseconds, so that an outage in a test resolves at once. */
const TEST_SIZED = {
  clientAttempts: 1,
  timings: { retryBaseMs: 50, retryMaxMs: 300, presenceIntervalMs: 100 },
};

/** A test-sized engine: createEngine with one client attempt and test timings, `setup`'s own timings on top. */
export function testEngine(setup: EngineSetup): EngineHarness {
  return createEngine({
    ...TEST_SIZED,
    ...setup,
    timings: { ...TEST_SIZED.timings, ...setup.timings },
  });
}

/** The engine of a test repository as acme/app, with test-sized back-off so outages resolve in milliseconds. */
export function startEngine(
  repo: TestRepo,
  url: string,
  userToken: string,
  flowRoots = ['flows'],
): EngineHarness {
  return testEngine({ root: repo.root, statePath: join(repo.dir, 'state.db'), url, userToken, flowRoots });
}

export interface EngineOnService {
  svc: TestService;
  /** The repository the engines sync, made of the files given; removed at close. */
  repo: TestRepo;
  /**
   * An engine of `repo` as acme/app on `svc`, test-sized as startEngine's, not started yet; `overrides` change any
   * of it (a proxy's url, the flow roots, the state's path, a hasher). One made after the first is closed is a
   * restart on the same state file. Each is closed at close(), if the test has not closed it.
   */
  engine(overrides?: Partial<EngineSetup>): EngineHarness;
  /**
   * Another checkout of the same repository on the same service (a teammate's clone): its own folder of `files`,
   * its own state and writer; closed and removed at close().
   */
  otherCheckout(
    files: Record<string, string | Buffer>,
    writer: string,
  ): { repo: TestRepo; harness: EngineHarness };
  /** The engines, then the service, then the repositories. */
  close(): Promise<void>;
}

/**
 * "An engine on a service": a real service, a repository of `files`, and the engines a test runs on them, cleaned
 * up by one close() (call it from afterEach).
 */
export async function engineOnService(
  files: Record<string, string | Buffer> = {},
  service: Partial<ServiceOptions> = {},
): Promise<EngineOnService> {
  const svc = await startTestService(service);
  const repo = makeRepo(files);
  const engines: EngineHarness[] = [];
  const others: TestRepo[] = [];
  return {
    svc,
    repo,
    otherCheckout(files, writer) {
      const other = makeRepo(files);
      others.push(other);
      const harness = testEngine({
        root: other.root,
        statePath: join(other.dir, 'state.db'),
        url: svc.url,
        userToken: svc.tokens.user,
        writer,
      });
      engines.push(harness);
      return { repo: other, harness };
    },
    engine(overrides = {}) {
      const harness = testEngine({
        root: repo.root,
        statePath: join(repo.dir, 'state.db'),
        url: svc.url,
        userToken: svc.tokens.user,
        ...overrides,
      });
      engines.push(harness);
      return harness;
    },
    async close() {
      for (const harness of engines.splice(0)) await harness.close();
      await svc.close();
      repo.cleanup();
      for (const other of others.splice(0)) other.cleanup();
    },
  };
}
