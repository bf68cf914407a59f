import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createClient } from '../../src/client/index.ts';
import { NO_KEYCHAIN, userEnv, writeAgentConfig } from '../support/agent-process.ts';
import { runFlowsync } from '../support/cli.ts';
import { sha256 } from '../support/flows.ts';
import { eventually, makeRepo, serviceTree, type TestRepo } from '../support/repo.ts';
import { startServeProcess, type ServeProcess } from '../support/serve-process.ts';
import { readDatabase } from '../support/service.ts';

/**
 * Issue 24, history and restore from the command line: every version the service keeps of a file, a deleted one
 * included, and any of them written back to disk, which is then sent as an edit.
 */
let serve: ServeProcess | null = null;
let repo: TestRepo | null = null;

afterEach(async () => {
  await serve?.stop();
  serve = null;
  repo?.cleanup();
  repo = null;
});

describe('flowsync history and restore', () => {
  it('lists the versions of a file, deleted included, and restores an edited and a deleted one', async () => {
    repo = makeRepo({ 'flows/ci/build.yml': 'build: 1\n', 'flows/ci/lint.yml': 'lint: 1\n' });
    const tree = repo;
    serve = await startServeProcess(join(tree.dir, 'service.db'), join(tree.dir, 'service.log'));
    const env = {
      ...userEnv(join(tree.dir, 'home'), serve),
      ...NO_KEYCHAIN,
    };
    writeAgentConfig(env, [{ path: tree.root, owner: 'acme', name: 'app' }]);
    const stored = () => serviceTree(readDatabase(join(tree.dir, 'service.db')), 'acme', 'app');
    const run = (...args: string[]) => runFlowsync(args, { env, cwd: tree.root });
    const sync = async () => expect((await run('sync', '.')).code).toBe(0);

    await sync();
    tree.write('flows/ci/build.yml', 'build: 2\n');
    await sync();
    tree.remove('flows/ci/build.yml');
    await sync();
    expect(stored()['flows/ci/build.yml']).toBeUndefined();

    const listed = await run('history', 'flows/ci/build.yml', '--json');
    expect(listed.code, listed.stderr).toBe(0);
    const { versions } = JSON.parse(listed.stdout) as {
      versions: { version: number; hash: string | null }[];
    };
    expect(versions.map((v) => v.hash === null)).toEqual([true, false, false]); // newest first: the deletion
    const shown = await run('history', 'flows/ci/build.yml');
    expect(shown.stdout).toMatch(/deleted .*\(current\)/);
    expect(shown.stdout).toContain('Restore one: flowsync restore flows/ci/build.yml --version N');

    // The deleted file comes back as its second version, and is sent as an edit.
    const back = await run('restore', 'flows/ci/build.yml', '--version', String(versions[1]!.version));
    expect(back.code, back.stderr).toBe(0);
    expect(back.stdout).toContain('is on disk');
    expect(readFileSync(join(tree.root, 'flows/ci/build.yml'), 'utf8')).toBe('build: 2\n');
    await sync();
    expect(stored()['flows/ci/build.yml']).toBe('build: 2\n');

    // An edited file, back to what it was at the first sync (--at a time between the first and second version).
    tree.write('flows/ci/lint.yml', 'lint: 2\n');
    await sync();
    const lint = JSON.parse((await run('history', 'flows/ci/lint.yml', '--json')).stdout) as {
      versions: { writtenAt: string }[];
    };
    const between = new Date(Date.parse(lint.versions[1]!.writtenAt) + 1).toISOString();
    expect((await run('restore', 'flows/ci/lint.yml', '--at', between)).code).toBe(0);
    await sync();
    expect(stored()['flows/ci/lint.yml']).toBe('lint: 1\n');

    // A mistake is one line and changes nothing.
    const wrong = await run('restore', 'flows/ci/lint.yml');
    expect(wrong.code).toBe(2);
    expect(wrong.stderr).toMatch(/^flowsync: Say which version/);
    const outside = await run('history', 'README.md');
    expect(outside.code).toBe(2);
    expect(outside.stderr).toContain('is not a file of a flow of this repository');
    expect(existsSync(join(tree.root, 'README.md'))).toBe(false);

    // The service reads a version by its number alone: a number of another repository's file of the same path is
    // refused, not written here.
    const other = createClient({ baseUrl: serve.url, auth: { userToken: serve.tokens.user } });
    const theirs = { repo_owner: 'acme', repo_name: 'other' };
    await other.flowDef.syncBatch({
      ...theirs,
      flows: [
        {
          flow_path: 'flows/ci',
          files: [{ path: 'lint.yml', content: 'not ours\n', hash: sha256('not ours\n') }],
        },
      ],
    });
    const [foreign] = (
      await other.flowDef.fileVersions({ ...theirs, flow_path: 'flows/ci', path: 'lint.yml' })
    ).versions;
    await other.close();
    const crossed = await run('restore', 'flows/ci/lint.yml', '--version', String(foreign!.version));
    expect(crossed.stderr).toMatch(/^flowsync: version \d+ is not a version of flows\/ci\/lint.yml: .*\n$/);
    expect(crossed.code).toBe(2);
    expect(readFileSync(join(tree.root, 'flows/ci/lint.yml'), 'utf8')).toBe('lint: 1\n');
  }, 120_000);

  it('says when the size cap removed older versions of the repository (issue 41)', async () => {
    repo = makeRepo({ 'flows/ci/build.yml': 'build: 0\n', 'flows/ci/big.yml': 'big: 0\n' });
    const tree = repo;
    serve = await startServeProcess(
      join(tree.dir, 'service.db'),
      join(tree.dir, 'service.log'),
      ['--history-max-mb', '1'],
      undefined,
      { FLOWSYNC_HISTORY_PRUNE_MS: '200' },
    );
    const env = {
      ...userEnv(join(tree.dir, 'home'), serve),
      ...NO_KEYCHAIN,
    };
    writeAgentConfig(env, [{ path: tree.root, owner: 'acme', name: 'app' }]);
    const run = (...args: string[]) => runFlowsync(args, { env, cwd: tree.root });
    expect((await run('sync', '.')).code).toBe(0);
    const before = await run('history', 'flows/ci/build.yml');
    expect(before.stdout).not.toContain('cap');
    // A busy file: eight versions of 300 KiB, 2.4 MiB of history over a 1 MiB cap.
    for (let n = 1; n <= 8; n++) {
      tree.write('flows/ci/big.yml', `big: ${n}\n${'x'.repeat(300 * 1024)}`);
      expect((await run('sync', '.')).code).toBe(0);
    }
    // The quiet file keeps its history, and says that the repository's was cut.
    await eventually(async () => {
      const shown = await run('history', 'flows/ci/build.yml');
      expect(shown.stdout).toMatch(
        /older versions of this repository were removed at the 1 MiB cap on \d{4}-\d\d-\d\d \d\d:\d\d UTC/,
      );
    });
  }, 120_000);
});
