import { chmodSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { startAgentProcess, userEnv, type AgentProcess } from '../support/agent-process.ts';
import { makeRepo, type TestRepo } from '../support/repo.ts';

let repo: TestRepo;
const agents: AgentProcess[] = [];

afterEach(async () => {
  for (const agent of agents.splice(0)) {
    agent.signal('SIGKILL');
    await agent.exited;
  }
  repo.cleanup();
});

const mode = (path: string) => (statSync(path).mode & 0o777).toString(8);

/** `flowsync start` as a user runs it, with the embedded service, in a HOME of the test's own. */
function start(home: string, ...folders: string[]) {
  const agent = startAgentProcess(['start', ...folders], userEnv(home, 'embedded'));
  agents.push(agent);
  return agent;
}

/** Every entry of the data and config folders with its mode, so a file added later is checked too. */
function modes(home: string): Record<string, string> {
  const data = join(home, '.local/share/flowsync');
  const config = join(home, '.config/flowsync');
  return {
    'data folder': mode(data),
    'config folder': mode(config),
    ...Object.fromEntries(readdirSync(data).map((name) => [name, mode(join(data, name))])),
    ...Object.fromEntries(readdirSync(config).map((name) => [name, mode(join(config, name))])),
  };
}

const PRIVATE = {
  'data folder': '700',
  'config folder': '700',
  'config.json': '600',
  'state.db': '600',
  'state.db-wal': '600',
  'state.db-shm': '600',
  'service.db': '600',
  'service.db-wal': '600',
  'service.db-shm': '600',
  'service.log': '600',
};

describe('the files flowsync keeps (synced flows, tracker data, its state and logs)', () => {
  it('are readable by this user only on a fresh machine: folders 0700, files 0600', async () => {
    repo = makeRepo({ 'flows/hello/main.yaml': 'hello\n' });
    const home = join(repo.dir, 'home');
    const agent = start(home, repo.root);
    await agent.waitFor(/Watching 1 repository/);
    const seen = modes(home);
    expect(seen).toMatchObject(PRIVATE);
    expect(Object.values(seen).filter((m) => m !== '600' && m !== '700')).toEqual([]);
  });

  it('are taken down to 0700 and 0600 when an older flowsync left them readable by everyone', async () => {
    repo = makeRepo({ 'flows/hello/main.yaml': 'hello\n' });
    const home = join(repo.dir, 'home');
    const first = start(home, repo.root);
    await first.waitFor(/Watching 1 repository/);
    // Killed, as a crash would: the -wal and -shm files stay behind, and are opened again at the next start.
    first.signal('SIGKILL');
    await first.exited;
    const data = join(home, '.local/share/flowsync');
    const config = join(home, '.config/flowsync');
    for (const folder of [data, config]) {
      chmodSync(folder, 0o755);
      for (const name of readdirSync(folder)) chmodSync(join(folder, name), 0o644);
    }
    expect(modes(home)).toMatchObject({
      'data folder': '755',
      'service.db-wal': '644',
      'config.json': '644',
    });

    const second = start(home);
    await second.waitFor(/Watching 1 repository/);
    const seen = modes(home);
    expect(seen).toMatchObject(PRIVATE);
    expect(Object.values(seen).filter((m) => m !== '600' && m !== '700')).toEqual([]);
  });
});
