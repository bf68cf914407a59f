import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { buildRenderer, launchChromium } from '../support/browser.ts';
import {
  NO_KEYCHAIN,
  startAgentProcess,
  userEnv,
  writeAgentConfig,
  type AgentProcess,
} from '../support/agent-process.ts';
import { startPostgresCluster, readPostgres, type PostgresCluster } from '../support/postgres.ts';
import { runFlowsync } from '../support/cli.ts';
import { makeRepo, type TestRepo } from '../support/repo.ts';
import { startServeProcess, type ServeProcess } from '../support/serve-process.ts';
import { readDatabase } from '../support/service.ts';
import { addRepository, initGit, openWindow, type OpenWindow } from '../support/window.ts';

/**
 * Issue 41, "repository config has a base like files": two developers (two HOMEs) on one `flowsync serve`, both with
 * acme/app. Bob's agent pushes his hand edit of `.flowsync/repo-config.json`; Alice then saves her own from the
 * window. Her save is a conflict shown on the Repo config screen, the service keeps Bob's (its rows are read), and
 * each of her two choices ends with the service and her disk equal.
 */
const SLOW = { timeout: 30_000 };
const CONFIG = '.flowsync/repo-config.json';

let browser: Browser;
let cluster: PostgresCluster | undefined;
let serve: ServeProcess | null = null;
let bob: AgentProcess | null = null;
let win: OpenWindow | null = null;
const repos: TestRepo[] = [];

beforeAll(async () => {
  buildRenderer();
  browser = await launchChromium();
}, 120_000);
afterAll(async () => {
  await browser?.close();
  cluster?.stop();
});
afterEach(async () => {
  await win?.close();
  win = null;
  bob?.signal('SIGINT');
  await bob?.exitWithin(10_000);
  bob = null;
  await serve?.stop();
  serve = null;
  for (const repo of repos.splice(0)) repo.cleanup();
});

function checkout(): TestRepo {
  const repo = makeRepo({
    'flows/ci/build.yml': 'build: 1\n',
    [CONFIG]: `${JSON.stringify({ editor: 'vim' }, null, 2)}\n`,
  });
  repos.push(repo);
  return repo;
}

type Rows = (sql: string, ...params: unknown[]) => { config: string; written_by: string | null }[];

/** Where the service keeps its rows: a SQLite file, or a database of a Postgres cluster made for these tests. */
const SERVICES: [string, (dir: string) => Promise<{ location: string; rows: Rows }>][] = [
  [
    'SQLite',
    async (dir) => ({
      location: join(dir, 'service.db'),
      rows: ((...a) => readDatabase(join(dir, 'service.db'))(...a)) as Rows,
    }),
  ],
  [
    'Postgres',
    async () => {
      cluster ??= await startPostgresCluster();
      const url = await cluster.createDatabase();
      return { location: url, rows: readPostgres(url) as Rows };
    },
  ],
];

describe.each(SERVICES)('a teammate’s newer repo config on a %s service', (_, serviceAt) => {
  it('is a conflict in Repo config, never overwritten; taking the service’s or keeping mine ends equal', async () => {
    const a = checkout();
    const b = checkout();
    initGit(a);
    const { location, rows } = await serviceAt(a.dir);
    serve = await startServeProcess(location, join(a.dir, 'service.log'));
    const onService = () => {
      const found = rows("SELECT config FROM repo_configs WHERE owner = 'acme' AND name = 'app'");
      return found.length === 0 ? null : (JSON.parse(found[0]!.config) as Record<string, unknown>);
    };
    const onDisk = (repo: TestRepo) => JSON.parse(readFileSync(join(repo.root, CONFIG), 'utf8')) as unknown;

    // Alice's window, her checkout added: her config reaches the service.
    win = await openWindow(browser, serve, a);
    const page: Page = win.page;
    await addRepository(page, a.root, '1 flow');
    await expect.poll(onService, SLOW).toEqual({ editor: 'vim' });

    // Bob's agent (his own HOME) on the same repository; he edits the config by hand and it is pushed.
    const bobEnv = { ...userEnv(join(b.dir, 'bob'), serve), ...NO_KEYCHAIN };
    writeAgentConfig(bobEnv, [{ path: b.root, owner: 'acme', name: 'app' }]);
    bob = startAgentProcess(['start', b.root], bobEnv);
    await bob.waitFor(/Watching 1 repository/, 60_000);
    b.write(CONFIG, `${JSON.stringify({ editor: 'emacs' }, null, 2)}\n`);
    await expect.poll(onService, SLOW).toEqual({ editor: 'emacs' });

    // Alice, who has not seen it, saves hers from the window: a conflict, shown; the service keeps Bob's.
    await page.getByRole('tab', { name: 'Repo config' }).click();
    await expect.poll(() => page.getByLabel('Editor').inputValue(), SLOW).toBe('vim');
    await page.getByLabel('Editor').fill('code');
    await page.getByRole('button', { name: 'Save' }).click();
    const conflict = page.getByTestId('repo-config-conflict');
    await expect.poll(() => conflict.textContent(), SLOW).toContain(`changed on the service by `);
    expect(await conflict.textContent()).toContain(b.root);
    expect(await conflict.textContent()).toMatch(/ at \d/);
    expect(onService()).toEqual({ editor: 'emacs' });
    // Her save is kept on her disk, not sent: nothing of hers is lost, nothing of Bob's replaced.
    expect(onDisk(a)).toEqual({ editor: 'code' });
    // Her agent's terminal says it in one line.
    await win.agent.waitFor(
      /acme\/app[^:]*: \.flowsync\/repo-config\.json changed on the service by \S+ at /,
    );

    // And `flowsync status`, asking her running agent.
    const status = await runFlowsync(['status'], { env: userEnv(join(a.dir, 'home'), serve) });
    expect(status.stdout).toMatch(
      /\.flowsync\/repo-config\.json changed on the service by \S+ at \S+: yours is not sent; choose in Repo config/,
    );

    // Take the service's: Bob's config on her disk, through the containment rule; service and disk equal.
    await page.getByRole('button', { name: "Take the service's" }).click();
    await expect.poll(() => conflict.count(), SLOW).toBe(0);
    await expect.poll(() => onDisk(a), SLOW).toEqual({ editor: 'emacs' });
    // Hers is not lost by the click: kept beside the file, and the screen says where.
    const kept = await page.getByTestId('repo-config-kept').textContent();
    const keptAs = /yours was kept in (\S+)\.$/.exec(kept ?? '')?.[1];
    expect(keptAs).toMatch(/^\.flowsync\/repo-config\.json\.conflict-/);
    expect(JSON.parse(readFileSync(join(a.root, keptAs!), 'utf8'))).toEqual({ editor: 'code' });
    expect(onService()).toEqual({ editor: 'emacs' });
    await expect.poll(() => page.getByLabel('Editor').inputValue(), SLOW).toBe('emacs');

    // Bob edits again; Alice saves again; this time she keeps hers: sent on top of Bob's, service and disk equal.
    b.write(CONFIG, `${JSON.stringify({ editor: 'nano' }, null, 2)}\n`);
    await expect.poll(onService, SLOW).toEqual({ editor: 'nano' });
    await page.getByLabel('Editor').fill('helix');
    await page.getByRole('button', { name: 'Save' }).click();
    await expect.poll(() => conflict.textContent(), SLOW).toContain('changed on the service by ');
    expect(onService()).toEqual({ editor: 'nano' });
    await page.getByRole('button', { name: 'Keep mine' }).click();
    await expect.poll(() => conflict.count(), SLOW).toBe(0);
    await expect.poll(onService, SLOW).toEqual({ editor: 'helix' });
    expect(onDisk(a)).toEqual({ editor: 'helix' });
    expect(
      rows("SELECT config, written_by FROM repo_configs WHERE owner = 'acme' AND name = 'app'")[0]!
        .written_by,
    ).toContain(a.root);
  }, 240_000);
});
