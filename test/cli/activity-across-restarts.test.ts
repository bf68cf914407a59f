import { readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { connectToBridge, type ActivityEntry } from '../../src/window/index.ts';
import { agentOnService, configWithoutDeletionHold, type AgentOnService } from '../support/agent-process.ts';
import { eventually } from '../support/repo.ts';

/**
 * Recent activity (the window's list, what `flowsync start` printed as it happened) is kept in the data folder:
 * after a restart the window still lists what the last run did, its ids go on from there, and a kept file that is
 * not a list (another version's, cut short) is an empty list, never a failed start. A real agent process, stopped
 * with a signal and started again, over a real service.
 */
let user: AgentOnService | null = null;
afterEach(async () => {
  await user?.close();
  user = null;
});

const activityOfAgent = async (user: AgentOnService): Promise<ActivityEntry[]> => {
  const lock = JSON.parse(readFileSync(join(user.dataDir, 'agent.lock'), 'utf8')) as { bridge: string };
  const { entries } = (await connectToBridge(lock.bridge).call('activity', {})) as {
    entries: ActivityEntry[];
  };
  return entries;
};
const said = (entries: ActivityEntry[]) =>
  entries.map((entry) => `${entry.kind} ${entry.flowPath}/${entry.path}`);

describe('Recent activity', () => {
  it('survives a restart: the last run’s entries are listed, newest first, and new ones follow them', async () => {
    user = await agentOnService({ 'flows/hello/main.yaml': 'v: 1\n' });
    configWithoutDeletionHold(user.env, user.repo.root);
    const first = user.run(['start']);
    await first.waitFor(/Watching 1 repository/);
    user.repo.write('flows/hello/extra.yaml', 'added: true\n');
    await eventually(async () =>
      expect(said(await activityOfAgent(user!))).toContain('created flows/hello/extra.yaml'),
    );
    const before = await activityOfAgent(user);
    first.signal('SIGINT');
    expect(await first.exited).toBe(0);
    const kept = join(user.dataDir, 'activity.json');
    // Private, as the rest of the data folder.
    expect(statSync(kept).mode & 0o777).toBe(0o600);

    const second = user.run(['start']);
    await second.waitFor(/Watching 1 repository/);
    const after = await activityOfAgent(user);
    expect(after).toEqual(expect.arrayContaining(before));
    user.repo.write('flows/hello/main.yaml', 'v: 2\n');
    await eventually(async () =>
      expect(said(await activityOfAgent(user!))[0]).toBe('updated flows/hello/main.yaml'),
    );
    const latest = await activityOfAgent(user);
    expect(latest[0]!.id).toBeGreaterThan(Math.max(...before.map((entry) => entry.id)));
    second.signal('SIGINT');
    await second.exited;
  });

  it('starts with an empty list when the kept file is not one, and writes a good one again', async () => {
    user = await agentOnService({ 'flows/hello/main.yaml': 'v: 1\n' });
    configWithoutDeletionHold(user.env, user.repo.root);
    const kept = join(user.dataDir, 'activity.json');
    const agent = user.run(['start']);
    await agent.waitFor(/Watching 1 repository/);
    agent.signal('SIGINT');
    await agent.exited;
    // Cut short by a full disk, then an entry of another shape beside a good one.
    writeFileSync(kept, '{"entries": [{"id": 1, "kind": "crea');
    const again = user.run(['start']);
    await again.waitFor(/Watching 1 repository/);
    expect(await activityOfAgent(user)).toEqual([]);
    again.signal('SIGINT');
    await again.exited;

    writeFileSync(kept, JSON.stringify({ entries: [{ id: 7, kind: 'no such kind' }] }));
    const third = user.run(['start']);
    await third.waitFor(/Watching 1 repository/);
    user.repo.write('flows/hello/main.yaml', 'v: 3\n');
    await eventually(async () =>
      expect(said(await activityOfAgent(user!))).toEqual(['updated flows/hello/main.yaml']),
    );
    third.signal('SIGINT');
    await third.exited;
    expect(said(JSON.parse(readFileSync(kept, 'utf8')).entries as ActivityEntry[])).toEqual([
      'updated flows/hello/main.yaml',
    ]);
  });
});
