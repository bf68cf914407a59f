import { userInfo } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { memberNameOf } from '../../src/protocol/index.ts';
import { NO_KEYCHAIN, userEnv, writeAgentConfig } from '../support/agent-process.ts';
import { runFlowsync } from '../support/cli.ts';
import { makeRepo, type TestRepo } from '../support/repo.ts';

/**
 * The embedded service is one developer's (issue 48, §3.14): its tokens act as one operator member named after
 * the OS user, so its history shows a name, and nothing else changes (no login, no invite, the same commands).
 */
let repo: TestRepo | null = null;
afterEach(() => {
  repo?.cleanup();
  repo = null;
});

describe('the embedded service names its one developer', () => {
  it('flowsync history on the embedded service names the OS user, not the shared token', async () => {
    repo = makeRepo({ 'flows/ci/build.yml': 'build: 1\n' });
    const tree = repo;
    const env = {
      ...userEnv(join(tree.dir, 'home'), 'embedded'),
      ...NO_KEYCHAIN,
    };
    writeAgentConfig(env, [{ path: tree.root, owner: 'acme', name: 'app' }]);
    const run = (...args: string[]) => runFlowsync(args, { env, cwd: tree.root, timeoutMs: 60_000 });
    expect((await run('sync', '.')).code).toBe(0);
    tree.write('flows/ci/build.yml', 'build: 2\n');
    const synced = await run('sync', '.');
    expect(synced.code, synced.stderr).toBe(0);

    const me = memberNameOf(userInfo().username);
    const shown = await run('history', 'flows/ci/build.yml');
    expect(shown.code, shown.stderr).toBe(0);
    const versions = shown.stdout.split('\n').filter((line) => /^ +\d+ /.test(line));
    expect(versions).toHaveLength(2);
    for (const line of versions) {
      expect(line).toContain(`bytes  ${me} · `);
      expect(line).not.toMatch(/shared token|before members/);
    }
    const listed = JSON.parse((await run('history', 'flows/ci/build.yml', '--json')).stdout) as {
      versions: { writtenBy: string | null }[];
    };
    expect(listed.versions.map((v) => v.writtenBy?.split(' · ')[0])).toEqual([me, me]);
  });
});
