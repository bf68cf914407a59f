import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { chmodSync, mkdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { NO_KEYCHAIN, startAgentProcess, userEnv, type AgentProcess } from '../support/agent-process.ts';
import { FLOWSYNC_BIN, runFlowsync } from '../support/cli.ts';
import { diskTree, eventually, makeRepo, serviceTree, type TestRepo } from '../support/repo.ts';
import { startServeProcess, type ServeProcess } from '../support/serve-process.ts';
import { readDatabase } from '../support/service.ts';

/**
 * Issue 20, finding 3: any local process, with no token, made the agent delete flows on the service. 19,995 idle
 * connections to its window's port used up its file descriptors; every failed read was taken as "file gone" and
 * an unreadable folder as empty, so the next round deleted a whole flow. Only "not found" is gone: a file or
 * folder that cannot be read now keeps what the service has of it, is shown as a warning, and is read again.
 */

let tree: TestRepo | null = null;
let serve: ServeProcess | null = null;
let agent: AgentProcess | null = null;
let user: string | null = null;

afterEach(async () => {
  if (agent) {
    agent.signal('SIGTERM');
    await agent.exitWithin();
  }
  agent = null;
  await serve?.stop();
  serve = null;
  tree?.cleanup();
  tree = null;
  if (user) {
    // tsx keeps a cache per user in the temporary folder: the test user's goes with it.
    rmSync(join(tmpdir(), `tsx-${execFileSync('id', ['-u', user]).toString().trim()}`), {
      recursive: true,
      force: true,
    });
    execFileSync('userdel', [user]);
  }
  user = null;
});

async function startService(): Promise<{ serve: ServeProcess; stored: () => Record<string, string> }> {
  const dir = join(tree!.dir, 'service');
  mkdirSync(dir);
  serve = await startServeProcess(join(dir, 'service.db'), join(dir, 'service.log'));
  const read = readDatabase(join(dir, 'service.db'));
  return { serve, stored: () => serviceTree(read, 'local', 'repo') };
}

/** One file's row in the agent's state (read-only, beside the running agent). */
function stateRow(home: string, path: string) {
  const read = readDatabase(join(home, '.local/share/flowsync/state.db'));
  return read<{ local_hash: string | null; warning: string | null }>(
    `SELECT local_hash, warning FROM files WHERE flow_path || '/' || path = ?`,
    path,
  )[0];
}

describe('an agent out of file descriptors', () => {
  it(
    'deletes nothing on the service, and sends the edit once it can read again',
    { timeout: 120_000 },
    async () => {
      const names = Array.from({ length: 40 }, (_, i) => `flows/x/step-${String(i).padStart(2, '0')}.yaml`);
      tree = makeRepo(Object.fromEntries(names.map((name) => [name, `${name}\n`])));
      const { stored } = await startService();
      const home = join(tree.dir, 'home');
      agent = startAgentProcess(['start', tree.root], { ...userEnv(home, serve!), ...NO_KEYCHAIN });
      await agent.waitFor(/Watching 1 repository/);
      await eventually(() => expect(stored()).toEqual(diskTree(tree!.root)));
      const before = stateRow(home, 'flows/x/step-07.yaml')!.local_hash;

      // No descriptor left: what 19,995 idle connections to its window did. Every open now fails with EMFILE.
      const limit = execFileSync('prlimit', [
        '--pid',
        String(agent.pid),
        '--nofile',
        '--output=SOFT',
        '--noheadings',
      ])
        .toString()
        .trim();
      execFileSync('prlimit', ['--pid', String(agent.pid), '--nofile=8:']);
      tree.write('flows/x/step-07.yaml', 'edited\n');
      await eventually(() => {
        const row = stateRow(home, 'flows/x/step-07.yaml');
        expect(row?.local_hash !== before || row?.warning !== null).toBe(true);
      }, 30_000);
      execFileSync('prlimit', ['--pid', String(agent.pid), `--nofile=${limit}:`]);

      // Once it can read again: the edit arrives, and every other file of the flow is still there.
      await eventually(() => expect(stored()['flows/x/step-07.yaml']).toBe('edited\n'), 60_000);
      expect(stored()).toEqual(diskTree(tree.root));
    },
  );
});

describe('a folder the agent may not read (chmod 000, the agent running as a real user)', () => {
  it(
    'keeps its files on the service, shows them as warnings, and converges with no edit once readable',
    { timeout: 120_000 },
    async () => {
      user = `fsr${randomBytes(4).toString('hex')}`;
      execFileSync('useradd', ['--no-create-home', '--shell', '/usr/sbin/nologin', user]);
      const as = {
        uid: Number(execFileSync('id', ['-u', user]).toString()),
        gid: Number(execFileSync('id', ['-g', user]).toString()),
      };
      tree = makeRepo({
        'flows/x/main.yaml': 'main\n',
        'flows/x/sub/a.yaml': 'a\n',
        'flows/x/sub/b.yaml': 'b\n',
        'flows/y/main.yaml': 'y\n',
      });
      const home = join(tree.dir, 'home');
      const env = { ...userEnv(home), ...NO_KEYCHAIN };
      execFileSync('chown', ['-R', `${as.uid}:${as.gid}`, tree.dir]);
      const { stored } = await startService();
      agent = startAgentProcess(
        ['start', tree.root],
        { ...userEnv(home, serve!), ...NO_KEYCHAIN },
        FLOWSYNC_BIN,
        as,
      );
      await agent.waitFor(/Watching 1 repository/);
      await eventually(() => expect(stored()).toEqual(diskTree(tree!.root)));
      const synced = stored();

      const sub = join(tree.root, 'flows/x/sub');
      chmodSync(sub, 0o000);
      // The agent has looked at the closed folder (unfixed: its files gone; fixed: each a warning).
      await eventually(() => {
        const row = stateRow(home, 'flows/x/sub/a.yaml');
        expect(row?.local_hash === null || row?.warning !== null).toBe(true);
      }, 30_000);
      // An edit beside it still goes; a file added in the closed folder (by root) waits for it to open.
      tree.write('flows/x/main.yaml', 'main 2\n');
      tree.write('flows/x/sub/c.yaml', 'c\n');
      await eventually(() => expect(stored()['flows/x/main.yaml']).toBe('main 2\n'), 30_000);
      expect(stored()).toEqual({ ...synced, 'flows/x/main.yaml': 'main 2\n' });
      const status = await runFlowsync(['status'], { env: { ...env, FLOWSYNC_URL: serve!.url }, as });
      expect(status.stdout).toContain(
        'flows/x/sub/a.yaml: could not be read: the service keeps its last version',
      );

      // Readable again, and no edit: the agent finds it by itself (the folder's change, or the back-off's look).
      chmodSync(sub, 0o755);
      await eventually(() => expect(stored()).toEqual(diskTree(tree!.root)), 60_000);
      expect(stored()['flows/x/sub/c.yaml']).toBe('c\n');
      await eventually(async () => {
        const again = await runFlowsync(['status'], { env: { ...env, FLOWSYNC_URL: serve!.url }, as });
        expect(again.stdout).not.toContain('could not be read');
      }, 30_000);
    },
  );
});
