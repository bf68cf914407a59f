import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { userEnv } from '../support/agent-process.ts';
import { runFlowsync } from '../support/cli.ts';
import { fileEntry } from '../support/flows.ts';
import { makeRepo, serviceTree, type TestRepo } from '../support/repo.ts';
import { startTestService, type TestService } from '../support/service.ts';

/** Port 9 (discard) on the loopback: nothing listens there, so a command sent to it fails. */
const NOBODY = 'http://127.0.0.1:9';

let svc: TestService;
let repo: TestRepo;
let home: string;

beforeEach(async () => {
  svc = await startTestService();
  repo = makeRepo({ 'flows/hello/main.yaml': 'hello\n' });
  home = join(repo.dir, 'home');
});
afterEach(async () => {
  await svc.close();
  repo.cleanup();
});

function writeConfig(serviceUrl: string): void {
  const folder = join(home, '.config/flowsync');
  mkdirSync(folder, { recursive: true });
  writeFileSync(
    join(folder, 'config.json'),
    JSON.stringify({ serviceUrl, repositories: [{ path: repo.root }] }),
  );
}

/**
 * `--url ''` (what a script's `--url "$SERVICE"` becomes when the variable is unset) is no URL: every command falls
 * through to $FLOWSYNC_URL, then the config file. Before issue 22 sync and status did, while call, login and logout
 * skipped both and went to the running agent's embedded service, else 127.0.0.1:7420.
 */
describe("--url '' means no URL given, for every command", () => {
  it.each([
    ['the config file', { config: 'service', env: '' }],
    ['$FLOWSYNC_URL, over the config file', { config: NOBODY, env: 'service' }],
  ])('all of them talk to the service named by %s', async (_, where) => {
    writeConfig(where.config === 'service' ? svc.url : where.config);
    const env = {
      ...userEnv(home),
      FLOWSYNC_URL: where.env === 'service' ? svc.url : where.env,
      FLOWSYNC_TOKEN: svc.tokens.user,
      FLOWSYNC_ADMIN_TOKEN: '',
      FLOWSYNC_API_KEY: '',
    };
    const flowsync = (...args: string[]) => runFlowsync([...args, '--url', ''], { env });

    const sync = await flowsync('sync', repo.root);
    expect(sync.code, sync.stderr).toBe(0);
    expect(serviceTree(svc.read, 'local', 'repo')).toEqual({ 'flows/hello/main.yaml': 'hello\n' });

    const status = await flowsync('status', '--json');
    expect(status.code, status.stderr).toBe(0);
    expect(JSON.parse(status.stdout)).toMatchObject([
      { root: repo.root, service: svc.url, current: true, counts: { files: 1, pending: 0 } },
    ]);

    const args = {
      repo_owner: 'acme',
      repo_name: 'other',
      flows: [{ flow_path: 'flows/a', files: [fileEntry('x.yaml', 'x\n')] }],
    };
    const call = await flowsync('call', 'svc/flow_def/action/sync_batch/run', '--args', JSON.stringify(args));
    expect(call.code, call.stderr).toBe(0);
    expect(serviceTree(svc.read, 'acme', 'other')).toEqual({ 'flows/a/x.yaml': 'x\n' });

    const logout = await flowsync('logout');
    expect(logout.code, logout.stderr).toBe(0);
    expect(logout.stdout).toContain(`kept for ${svc.url}.`);
  });
});
