import { randomBytes } from 'node:crypto';
import {
  existsSync,
  mkdirSync,
  openSync,
  readdirSync,
  readFileSync,
  writeFileSync,
  writeSync,
  closeSync,
} from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { agentOnService, type AgentOnService } from '../support/agent-process.ts';
import { runFlowsync } from '../support/cli.ts';
import { diskTree, eventually, serviceTree, type TestRepo } from '../support/repo.ts';
import type { TestService } from '../support/service.ts';

let user: AgentOnService;
let svc: TestService;
let repo: TestRepo;
let env: NodeJS.ProcessEnv;
let dataDir: string;
let configDir: string;
let start: AgentOnService['start'];

beforeEach(async () => {
  user = await agentOnService({ 'flows/a/x.yaml': 'x\n', 'flows/b/y.yaml': 'y\n' });
  ({ svc, repo, env, dataDir, configDir, start } = user);
});
afterEach(() => user.close());

/** Overwrites the first page of the state database with random bytes, as a bad disk or a stray write would. */
function damageState(): void {
  const fd = openSync(join(dataDir, 'state.db'), 'r+');
  writeSync(fd, randomBytes(4096), 0, 4096, 0);
  closeSync(fd);
}

const setAside = (prefix: string, dir = dataDir) =>
  readdirSync(dir).filter((name) => name.startsWith(prefix));
const stored = () => serviceTree(svc.read, 'local', 'repo');

describe('a damaged state database', () => {
  it('is moved aside in one line and rebuilt: start converges, status exits 0', async () => {
    const first = start(repo.root);
    await first.waitFor(/Watching 1 repository/);
    first.signal('SIGINT');
    expect(await first.exitWithin()).toBe(0);

    damageState();
    repo.write('flows/a/x.yaml', 'x changed while the state was damaged\n');
    repo.write('flows/c/new.yaml', 'new\n');
    const second = start();
    await second.waitFor(/Watching 1 repository/);
    const line = new RegExp(
      `flowsync: the state database could not be read \\(file is not a database\\); moved it to ` +
        `${join(dataDir, 'state.db')}\\.corrupt-[\\dTZ-]+\\. The next sync re-checks every file with the service\\.\\n`,
    );
    expect(second.output()).toMatch(line);
    expect(second.output()).not.toMatch(/SqliteError|\n {4}at /);
    // The new file goes. The edit made while the state was damaged is over a version under this checkout's id, but
    // the id alone is no proof it is its own (issue 45: a copy of this checkout carries it too): asked, not sent.
    await eventually(() => expect(stored()['flows/c/new.yaml']).toBe('new\n'));
    expect(stored()['flows/a/x.yaml']).toBe('x\n');
    await eventually(async () => {
      const conflicts = await runFlowsync(['conflicts', repo.root], { env });
      expect(conflicts.stdout).toContain('x.yaml');
    });
    const mine = await runFlowsync(['resolve', join(repo.root, 'flows/a/x.yaml'), '--mine'], { env });
    expect(mine.code).toBe(0);
    await eventually(() => expect(stored()).toEqual(diskTree(repo.root)));
    second.signal('SIGINT');
    expect(await second.exitWithin()).toBe(0);
    expect(setAside('state.db.corrupt-')).toHaveLength(1);

    damageState();
    const status = await runFlowsync(['status'], { env });
    expect(status.code).toBe(0);
    expect(status.stderr).toMatch(line);
    expect(status.stderr.trim().split('\n')).toHaveLength(1);
    expect(status.stdout).toContain('Agent: not running');
    expect(setAside('state.db.corrupt-')).toHaveLength(2);
  }, 60_000);
});

describe('a damaged config file', () => {
  it('that is not JSON is kept aside in one line, and the agent goes on with the defaults', async () => {
    mkdirSync(configDir, { recursive: true });
    const garbage = Buffer.concat([Buffer.from('{"repositories": [{"path": '), randomBytes(64)]);
    writeFileSync(join(configDir, 'config.json'), garbage);
    const agent = start(repo.root);
    await agent.waitFor(/Watching 1 repository/);
    expect(agent.output()).toMatch(
      new RegExp(
        `flowsync: ${join(configDir, 'config.json')} was not valid JSON: kept it as ` +
          `${join(configDir, 'config.json')}\\.bad-[\\dTZ-]+ and continued with the default settings [^\\n]*\\n`,
      ),
    );
    const [bad] = setAside('config.json.bad-', configDir);
    expect(readFileSync(join(configDir, bad!))).toEqual(garbage);
    await eventually(() => expect(stored()).toEqual(diskTree(repo.root)));
    // The new config names the folder again.
    expect(JSON.parse(readFileSync(join(configDir, 'config.json'), 'utf8')).repositories).toHaveLength(1);
  });

  it('that is JSON with a wrong field is refused in one line naming the field, and left as it is', async () => {
    mkdirSync(configDir, { recursive: true });
    const edited = JSON.stringify({ repositories: [{ path: repo.root, enabled: 'yes' }] });
    writeFileSync(join(configDir, 'config.json'), edited);
    const result = await runFlowsync(['start'], { env });
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(
      /^flowsync: .*config\.json is not a valid flowsync config \(repositories\.0\.enabled: [^\n]*\n$/,
    );
    expect(readFileSync(join(configDir, 'config.json'), 'utf8')).toBe(edited);
    expect(existsSync(join(dataDir, 'agent.lock'))).toBe(false);
  });
});
