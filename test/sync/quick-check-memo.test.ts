import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { engineOnService, type EngineOnService } from '../support/engine.ts';
import { serviceTree } from '../support/repo.ts';
import { readDatabase } from '../support/service.ts';

const FILES = { 'flows/ci/x.yml': 'x: 1\n', 'flows/ci/y.yml': 'y: 1\n' };
let setup: EngineOnService;
afterEach(async () => {
  await setup?.close();
});

describe('the quick check memo (issue 45, failure 2)', () => {
  it('a service that returns to an aggregate the memo holds, after this checkout wrote in between, is compared', async () => {
    setup = await engineOnService(FILES);
    const c = setup.engine({ writer: 'carol@desk:~/app' });
    const { repo: B, harness: b } = setup.otherCheckout(FILES, 'bob@laptop:~/app');
    const service = () => serviceTree(readDatabase(setup.svc.dbPath), 'acme', 'app');
    await c.engine.initialSync();
    await b.engine.initialSync();
    // Bob deletes y.yml: the service is S1 = {x}. Carol's quick check finds it (her memo is S1 now).
    B.remove('flows/ci/y.yml');
    await b.engine.syncOnce();
    await c.engine.round.check({ quick: true });
    expect(c.state.behind(c.engine.repoId).map((f) => f.path)).toEqual(['y.yml']);
    // Carol edits y.yml (a conflict with Bob's deletion) and keeps hers: her agent's round re-creates it (S2).
    setup.repo.write('flows/ci/y.yml', 'y: carol\n');
    await c.engine.syncOnce(); // rescan: a conflict; ends with a full check (memo S1: the service is still S1)
    expect(c.state.conflicts(c.engine.repoId).map((f) => f.path)).toEqual(['y.yml']);
    await c.engine.service.resolve(null, 'mine');
    await c.engine.sync(); // the round the running agent runs: no check after it
    expect(service()).toEqual({ 'flows/ci/x.yml': 'x: 1\n', 'flows/ci/y.yml': 'y: carol\n' });
    // Bob deletes it on the service again (a file not in his checkout): the service is S1 again, to the byte.
    const seen = (await b.engine.service.filesNotInCheckout()).map(({ flowPath, path, hash }) => ({
      flowPath,
      path,
      hash,
    }));
    expect(await b.engine.service.deleteNotInCheckout(seen, true)).toBe(1);
    expect(service()).toEqual({ 'flows/ci/x.yml': 'x: 1\n' });
    // Carol's next quick checks: y.yml is on her disk, deleted on the service; it must be named.
    await c.engine.round.check({ quick: true });
    await c.engine.round.check({ quick: true });
    expect(existsSync(join(setup.repo.root, 'flows/ci/y.yml'))).toBe(true);
    expect(readFileSync(join(setup.repo.root, 'flows/ci/y.yml'), 'utf8')).toBe('y: carol\n');
    const named = [...c.state.behind(c.engine.repoId), ...c.state.conflicts(c.engine.repoId)].map(
      (f) => f.path,
    );
    expect(named).toEqual(['y.yml']);
    // A full check (the periodic rescan's) finds it.
    await c.engine.round.check();
    expect(
      [...c.state.behind(c.engine.repoId), ...c.state.conflicts(c.engine.repoId)].map((f) => f.path),
    ).toEqual(['y.yml']);
  });
});
