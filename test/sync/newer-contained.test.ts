import { lstatSync, readlinkSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { engineOnService, type EngineOnService } from '../support/engine.ts';

/**
 * "Take them" (files newer on the service) first looks at what is on disk, to write over nothing edited since. That
 * look follows the containment rule: a link put where the file was is not read through (it was: the bytes it
 * pointed to, outside the repository, were hashed, and equal to the base they let the service's version in).
 */
let setup: EngineOnService;
afterEach(async () => {
  await setup?.close();
});

describe('taking the files newer on the service', () => {
  it('reads no link: a link where the file was is not taken for the file, and not written over', async () => {
    setup = await engineOnService({ 'flows/ci/build.yml': 'build: 1\n' });
    const a = setup.engine({ writer: 'ada@laptop:~/app' });
    await a.engine.initialSync();
    const { repo: other, harness: b } = setup.otherCheckout(
      { 'flows/ci/build.yml': 'build: 1\n' },
      'bob@desk:~/app',
    );
    await b.engine.initialSync();
    setup.repo.write('flows/ci/build.yml', 'build: ada\n');
    await a.engine.syncOnce();
    await b.engine.round.check();
    expect(b.state.behind(b.engine.repoId).map((file) => file.path)).toEqual(['build.yml']);

    // The file replaced by a link to a file outside with the same bytes as the base.
    const outside = join(other.dir, 'outside.yml');
    writeFileSync(outside, 'build: 1\n');
    rmSync(join(other.root, 'flows/ci/build.yml'));
    symlinkSync(outside, join(other.root, 'flows/ci/build.yml'));
    const { taken, notWritten } = await b.engine.service.takeNewer();
    expect(taken).toEqual([]);
    expect(notWritten).toEqual([expect.objectContaining({ path: 'build.yml' })]);
    expect(lstatSync(join(other.root, 'flows/ci/build.yml')).isSymbolicLink()).toBe(true);
    expect(readlinkSync(join(other.root, 'flows/ci/build.yml'))).toBe(outside);
  });
});
