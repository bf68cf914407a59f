import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { startEngine, type EngineHarness } from '../support/engine.ts';
import { eventually, makeRepo, serviceTree, type TestRepo } from '../support/repo.ts';
import { startTestService, type TestService } from '../support/service.ts';

/**
 * A repository none of whose flow roots is there (issue 25, item 3): kept and said ("nothing to sync"), never
 * "in sync" with nothing said; a `flows/` made later is synced without a restart, and the line goes.
 */
let svc: TestService;
let repo: TestRepo;
let harness: EngineHarness | null = null;

beforeEach(async () => {
  svc = await startTestService();
  repo = makeRepo({ 'notes/todo.md': 'buy milk\n' });
});
afterEach(async () => {
  await harness?.close();
  harness = null;
  repo.cleanup();
  await svc.close();
});

describe('a repository without its flow roots', () => {
  it('says it has nothing to sync, and syncs a flows/ made later', async () => {
    harness = startEngine(repo, svc.url, svc.tokens.user, ['flows', 'apps/flows']);
    const { engine } = harness;
    await engine.start();
    const line = `no flows/ or apps/flows/ folder in ${repo.root}: nothing to sync; set its flow folders in Settings`;
    expect(engine.nothingToSync()).toBe(line);
    expect(engine.status()).toMatchObject({ phase: 'idle', message: line });

    repo.write('apps/flows/deploy/main.yml', 'steps: []\n');
    await eventually(() =>
      expect(serviceTree(svc.read, 'acme', 'app')).toEqual({
        'apps/flows/deploy/main.yml': 'steps: []\n',
      }),
    );
    expect(engine.nothingToSync()).toBeNull();
    expect(engine.status().message).toBeNull();
  });

  it('a flow root gone after its files were synced is held, not "nothing to sync", and nothing is deleted', async () => {
    repo.write('flows/deploy/main.yml', 'steps: []\n');
    harness = startEngine(repo, svc.url, svc.tokens.user);
    const { engine } = harness;
    await engine.start();
    await eventually(() =>
      expect(serviceTree(svc.read, 'acme', 'app')).toEqual({ 'flows/deploy/main.yml': 'steps: []\n' }),
    );
    repo.remove('flows');
    await eventually(() => expect(engine.status().phase).toBe('missing'));
    expect(engine.nothingToSync()).toBeNull();
    await engine.syncAndCheck();
    expect(serviceTree(svc.read, 'acme', 'app')).toEqual({ 'flows/deploy/main.yml': 'steps: []\n' });
  });
});
