import { setTimeout as sleep } from 'node:timers/promises';
import { afterEach, describe, expect, it } from 'vitest';
import { engineOnService, type EngineOnService } from '../support/engine.ts';
import { eventually, serviceTree } from '../support/repo.ts';

/**
 * Issue 21 (a flake that was a bug): an `rm -r` of 40 files was seen by the watcher in two parts on a loaded
 * machine (3 files, then 37), and the round between them deleted the 3 on the service: only 37 were held, and 3 of
 * a teammate's files were gone without asking. Deletions now wait until their count stands still (DELETION_STILL_MS).
 */
let setup: EngineOnService | null = null;

afterEach(async () => {
  await setup?.close();
  setup = null;
});

function files(): Record<string, string> {
  const tree: Record<string, string> = { 'flows/keep/a.yml': 'a: 1\n' };
  for (let n = 0; n < 40; n++) tree[`flows/gen/step-${n}.yml`] = `step: ${n}\n`;
  return tree;
}

describe('a burst of deletions seen in parts', () => {
  it('is held whole: nothing of it is deleted on the service before its user says so', async () => {
    setup = await engineOnService(files());
    const { repo, svc } = setup;
    const { engine, state } = setup.engine();
    await engine.start();
    const stored = () => Object.keys(serviceTree(svc.read, 'acme', 'app'));
    expect(stored()).toHaveLength(41);

    for (let n = 0; n < 3; n++) repo.remove(`flows/gen/step-${n}.yml`);
    await eventually(() => expect(state.deletionCount(engine.repoId)).toBe(3));
    // Long enough for a round to send those 3 on its own (tens of milliseconds), as it did before.
    await sleep(300);
    for (let n = 3; n < 40; n++) repo.remove(`flows/gen/step-${n}.yml`);

    await eventually(() => expect(engine.status().heldDeletions).toBe(40));
    expect(stored()).toHaveLength(41);
  });

  it('a few deletions still go by themselves once they stand still', async () => {
    setup = await engineOnService(files());
    const { repo, svc } = setup;
    const { engine } = setup.engine();
    await engine.start();
    repo.remove('flows/gen/step-0.yml');
    repo.write('flows/keep/a.yml', 'a: 2\n');
    await eventually(() => expect(serviceTree(svc.read, 'acme', 'app')['flows/keep/a.yml']).toBe('a: 2\n'));
    await eventually(() =>
      expect(serviceTree(svc.read, 'acme', 'app')['flows/gen/step-0.yml']).toBeUndefined(),
    );
    // The service has it; its answer is recorded a moment later.
    await eventually(() =>
      expect(engine.status()).toMatchObject({ heldDeletions: 0, counts: { pending: 0 } }),
    );
  });
});
