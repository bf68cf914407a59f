import { mkdirSync, mkdtempSync, realpathSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { userEnv } from '../support/agent-process.ts';
import { runFlowsync } from '../support/cli.ts';
import { serviceTree } from '../support/repo.ts';
import { startTestService, type TestService } from '../support/service.ts';

let svc: TestService;
/** The user's home and the folder commands are run from; the repository is `app` in it. */
let parent: string;

beforeEach(async () => {
  svc = await startTestService();
  parent = realpathSync(mkdtempSync(join(tmpdir(), 'flowsync-configured-')));
  const write = (path: string, content: string) => {
    mkdirSync(join(parent, 'app', path, '..'), { recursive: true });
    writeFileSync(join(parent, 'app', path), content);
  };
  write('pipelines/deploy/main.yaml', 'deploy\n');
  // Under the default flow root: sent only if the configured entry was missed.
  write('flows/other/main.yaml', 'other\n');
  symlinkSync(join(parent, 'app'), join(parent, 'link'));
  mkdirSync(join(parent, '.config/flowsync'), { recursive: true });
  writeFileSync(
    join(parent, '.config/flowsync/config.json'),
    JSON.stringify({
      serviceUrl: svc.url,
      repositories: [{ path: join(parent, 'app'), flowRoots: ['pipelines'], owner: 'acme', name: 'widgets' }],
    }),
  );
});
afterEach(async () => {
  await svc.close();
  rmSync(parent, { recursive: true, force: true });
});

/**
 * `flowsync sync <folder>` finds the folder's entry in the config file however the folder is written, and syncs
 * with its flow roots, owner and name; before issue 22 it compared the paths as strings and missed all of these.
 */
describe('flowsync sync of a configured repository, named another way', () => {
  it.each(['./app', 'app/', '~/app', 'link'])(
    '%s: its flow roots, under its owner and name',
    async (folder) => {
      const env = {
        ...userEnv(parent),
        FLOWSYNC_URL: '',
        FLOWSYNC_TOKEN: svc.tokens.user,
        FLOWSYNC_ADMIN_TOKEN: '',
      };
      const sync = await runFlowsync(['sync', folder], { env, cwd: parent });
      expect(sync.code, sync.stderr).toBe(0);
      expect(sync.stdout).toContain('acme/widgets');
      expect(serviceTree(svc.read, 'acme', 'widgets')).toEqual({ 'pipelines/deploy/main.yaml': 'deploy\n' });
      expect(svc.read('SELECT owner, name FROM repos')).toEqual([{ owner: 'acme', name: 'widgets' }]);
    },
  );
});
