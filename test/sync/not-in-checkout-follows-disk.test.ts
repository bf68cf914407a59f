import { afterEach, describe, expect, it } from 'vitest';
import { engineOnService, type EngineOnService } from '../support/engine.ts';

/**
 * Issue 46: "N files on the service are not in this checkout" stayed for minutes after a branch switch brought
 * every file back, because the quick look compares only flows whose service aggregate changed, and the files back
 * on disk were not sent (the round that would have acknowledged them did not run: paused here; a git motion held
 * for its user, in the team's case). The count follows the disk: a flow whose files came back is compared again at
 * the next look, and what is on disk as the service has it is taken as synced.
 */
const FILES = { 'flows/ci/x.yml': 'x: 1\n', 'flows/ci/y.yml': 'y: 1\n' };
let setup: EngineOnService;
afterEach(async () => {
  await setup?.close();
});

describe('files on the service not in this checkout', () => {
  it('are counted no more at the next quick look once they are on disk, even when nothing was sent', async () => {
    setup = await engineOnService(FILES);
    const carol = setup.engine({ writer: 'carol@desk:~/app' });
    await carol.engine.initialSync();
    const { repo: B, harness: bob } = setup.otherCheckout({ 'flows/ci/x.yml': 'x: 1\n' }, 'bob@laptop:~/app');
    await bob.engine.initialSync();
    await bob.engine.round.check({ quick: true });
    expect(bob.engine.round.notInCheckout).toBe(1);

    // Back on disk, as the service has it; paused, so no round sends (nor acknowledges) it.
    bob.engine.pause(new Date().toISOString());
    B.write('flows/ci/y.yml', 'y: 1\n');
    await bob.engine.syncOnce();
    await bob.engine.round.check({ quick: true });
    expect(bob.engine.round.notInCheckout).toBe(0);
    // And it is in sync, not a file to send: the service's version is the very bytes on disk.
    const y = bob.state.filesOfFlow(bob.engine.repoId, 'flows/ci').find((file) => file.path === 'y.yml');
    expect(y?.ackedHash).toBe(y?.localHash);
  });

  it('are counted again once gone from disk, at the next quick look', async () => {
    setup = await engineOnService(FILES);
    const carol = setup.engine({ writer: 'carol@desk:~/app' });
    await carol.engine.initialSync();
    const { repo: B, harness: bob } = setup.otherCheckout({ 'flows/ci/x.yml': 'x: 1\n' }, 'bob@laptop:~/app');
    bob.engine.pause(new Date().toISOString());
    await bob.engine.initialSync();
    await bob.engine.round.check({ quick: true });
    expect(bob.engine.round.notInCheckout).toBe(1);
    B.write('flows/ci/y.yml', 'y: bob\n');
    await bob.engine.syncOnce();
    await bob.engine.round.check({ quick: true });
    expect(bob.engine.round.notInCheckout).toBe(0);
    B.remove('flows/ci/y.yml');
    await bob.engine.syncOnce();
    await bob.engine.round.check({ quick: true });
    expect(bob.engine.round.notInCheckout).toBe(1);
  });
});
