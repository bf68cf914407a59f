import { readFileSync, renameSync, rmSync } from 'node:fs';
import { connect, createServer, type Server } from 'node:net';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { agentOnService, type AgentOnService } from '../support/agent-process.ts';
import { runFlowsync } from '../support/cli.ts';

/**
 * A command's connection to the running agent dropped before any answer (issue 49: under another user's flood,
 * `flowsync conflicts` ended in an "incident"): the command sends its call again and says so, and when the agent
 * drops it every time, says that in one line (exit 3), never an incident. Played with the agent's real socket moved
 * aside and a socket in its place that closes the first connections it is given, then passes the rest on.
 */
let user: AgentOnService | null = null;
let front: Server | null = null;

afterEach(async () => {
  front?.close();
  front = null;
  await user?.close();
  user = null;
});

describe('a command whose connection to the agent drops', () => {
  it('sends its call again and says so; dropped every time, says that in one line, never an incident', async () => {
    user = await agentOnService({ 'flows/ci/build.yml': 'build: 1\n' });
    const { repo, env } = user;
    const agent = user.start(repo.root);
    await agent.waitFor(/Watching 1 repository/, 60_000);
    const lock = JSON.parse(readFileSync(join(user.dataDir, 'agent.lock'), 'utf8')) as { socket: string };
    const real = `${lock.socket}.real`;
    renameSync(lock.socket, real);
    let drops = 2;
    front = createServer((socket) => {
      if (drops-- > 0) return socket.destroy();
      const behind = connect(real);
      socket.pipe(behind).pipe(socket);
      behind.on('error', () => socket.destroy());
      socket.on('error', () => behind.destroy());
    });
    await new Promise<void>((listening) => front!.listen(lock.socket, listening));

    const conflicts = await runFlowsync(['conflicts', repo.root], { env });
    expect(conflicts.code, conflicts.stderr).toBe(0);
    expect(conflicts.stderr).toMatch(
      /^flowsync: the agent \(pid \d+\) dropped the connection; trying again \(2 of 4\)…\nflowsync: the agent \(pid \d+\) dropped the connection; trying again \(3 of 4\)…\n$/,
    );
    expect(conflicts.stdout).toContain('no conflicts, no deletions held');

    drops = Infinity;
    const dropped = await runFlowsync(['conflicts', repo.root], { env });
    expect(dropped.code).toBe(3);
    expect(dropped.stderr).toContain('dropped the connection 4 times in a row');
    expect(dropped.stderr).not.toMatch(/incident|something went wrong/);
    expect(dropped.stderr.trim().split('\n').at(-1)).toMatch(/^flowsync: /);

    front.close();
    front = null;
    rmSync(lock.socket, { force: true });
    renameSync(real, lock.socket);
  });
});
