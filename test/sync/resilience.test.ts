import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterEach, describe, expect, it } from 'vitest';
import { startEngine, type EngineHarness } from '../support/engine.ts';
import { twoBranches } from '../support/git.ts';
import { diskTree, eventually, makeRepo, serviceTree, type TestRepo } from '../support/repo.ts';
import { startServeProcess, type ServeProcess } from '../support/serve-process.ts';
import { readDatabase, startTestService, type TestService } from '../support/service.ts';

let repo: TestRepo | null = null;
let harness: EngineHarness | null = null;
const services: ServeProcess[] = [];
let svc: TestService | null = null;

afterEach(async () => {
  await harness?.close();
  harness = null;
  await Promise.all(services.splice(0).map((s) => s.stop()));
  await svc?.close();
  svc = null;
  repo?.cleanup();
  repo = null;
});

describe('the service stopped during 200 edits, then started again', () => {
  it('goes offline with the pending count, catches up when the service is back, and converges exactly', async () => {
    const files: Record<string, string> = {};
    for (let f = 0; f < 20; f++) files[`flows/f${f}/main.yaml`] = `flow ${f} v0\n`;
    repo = makeRepo(files);
    const dbPath = join(repo.dir, 'service.db');
    const first = await startServeProcess(dbPath, join(repo.dir, 'service.log'));
    services.push(first);
    const port = new URL(first.url).port;
    harness = startEngine(repo, first.url, first.tokens.user);
    await harness.engine.start();
    const phases = new Set<string>();
    harness.engine.on('status', (status) => phases.add(status.phase));

    let second: ServeProcess | null = null;
    for (let edit = 1; edit <= 200; edit++) {
      const flow = edit % 20;
      repo.write(`flows/f${flow}/main.yaml`, `flow ${flow} v${edit}\n`);
      if (edit % 7 === 0) repo.write(`flows/f${flow}/extra-${edit}.yaml`, `extra ${edit}\n`);
      if (edit % 11 === 0) repo.remove(`flows/f${(flow + 1) % 20}/extra-${edit - 4}.yaml`);
      if (edit === 50) await first.stop();
      if (edit === 150) {
        await eventually(() => expect(harness!.engine.status().phase).toBe('offline'));
        expect(harness!.engine.status().counts.pending).toBeGreaterThan(0);
        second = await startServeProcess(dbPath, join(repo.dir, 'service.log'), ['--port', port]);
        services.push(second);
      }
      await sleep(5);
    }
    await eventually(
      () => expect(serviceTree(readDatabase(dbPath), 'acme', 'app')).toEqual(diskTree(repo!.root)),
      60_000,
    );
    expect(phases).toContain('offline');
    expect(second).not.toBeNull();
    await eventually(() =>
      expect(harness!.engine.status()).toMatchObject({ phase: 'idle', counts: { pending: 0 } }),
    );
  }, 90_000);
});

describe('a git checkout storm', () => {
  it('converges to the last branch exactly after five quick switches between branches 2,000 files apart', async () => {
    const files: Record<string, string> = {};
    for (let f = 0; f < 100; f++) {
      for (let i = 0; i < 20; i++) files[`flows/f${f}/step-${i}.yaml`] = `main ${f}/${i}\n`;
    }
    const tree = makeRepo(files);
    repo = tree;
    const git = twoBranches(tree.root, () => {
      for (let f = 0; f < 100; f++) {
        for (let i = 0; i < 20; i++) tree.write(`flows/f${f}/step-${i}.yaml`, `other ${f}/${i}\n`);
      }
      for (let f = 100; f < 110; f++) tree.write(`flows/f${f}/only-on-other.yaml`, `new ${f}\n`);
      tree.remove('flows/f0');
    });

    svc = await startTestService();
    harness = startEngine(repo, svc.url, svc.tokens.user);
    await harness.engine.start();
    const stored = () => serviceTree(svc!.read, 'acme', 'app');
    expect(Object.keys(stored())).toHaveLength(2000);

    for (const branch of ['other', 'main', 'other', 'main', 'other']) git('checkout', '-q', branch);
    await eventually(() => expect(stored()).toEqual(diskTree(repo!.root)), 60_000);
    expect(Object.keys(stored())).toHaveLength(99 * 20 + 10);
    expect(stored()['flows/f1/step-0.yaml']).toBe('other 1/0\n');
  }, 90_000);
});
