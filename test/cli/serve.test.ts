import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { request } from 'undici';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { FLOWSYNC_BIN } from '../support/cli.ts';
import { eventually } from '../support/repo.ts';
import { startServeProcess, type ServeProcess } from '../support/serve-process.ts';

let dir: string;
const running: ServeProcess[] = [];
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'flowsync-serve-'));
});
afterEach(async () => {
  await Promise.all(running.splice(0).map((p) => p.stop()));
  rmSync(dir, { recursive: true, force: true });
});

async function serve(...extra: string[]): Promise<ServeProcess> {
  const process = await startServeProcess(join(dir, 'service.db'), join(dir, 'service.log'), extra);
  running.push(process);
  return process;
}

function workflowStates(url: string, authorization: string) {
  return request(`${url}/api/run/svc/tracker/private/workflow_state_cache_get_by_team`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization },
    body: JSON.stringify({ args: { baggage: { trace_id: 't1', traffic_type: 'external' }, team_id: 'ENG' } }),
  });
}

describe('flowsync serve', () => {
  it('on a terminal prints the human lines only, and logs its JSON lines to a file it names (issue 42)', async () => {
    // A terminal of its own (util-linux `script` gives the command a pty), as an operator starts it.
    const command = [process.execPath, FLOWSYNC_BIN, 'serve', '--port', '0', '--db', join(dir, 'service.db')]
      .map((word) => `'${word}'`)
      .join(' ');
    const child = spawn('script', ['-qfec', `exec ${command}`, '/dev/null'], {
      env: { ...process.env, XDG_DATA_HOME: join(dir, 'data') },
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    let out = '';
    child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString('utf8')));
    const exited = new Promise((done) => child.once('exit', done));
    try {
      await eventually(() => expect(out).toContain('Press Ctrl-C to stop.'));
      const url = /listening on (\S+)\r?\n/.exec(out)![1]!;
      const admin = /admin token:\s+(\S+)/.exec(out)![1]!;
      const reply = await workflowStates(url, `Admin ${admin}`);
      expect(reply.statusCode).toBe(200);
      await reply.body.dump();
      const logPath = join(dir, 'data', 'flowsync', 'serve.log');
      expect(out).toContain(`log: ${logPath} (JSON lines; --log-file sets another file)`);
      // The call is logged, there and not on the terminal.
      await eventually(() => expect(readFileSync(logPath, 'utf8')).toContain('"trace_id":"t1"'));
      expect(readFileSync(logPath, 'utf8')).toContain('"msg":"service listening"');
    } finally {
      child.kill('SIGTERM');
      await exited;
    }
    expect(out).not.toContain('{"level"');
    expect(out).not.toContain('"msg"');
  });

  it('prints its address and tokens once, and answers the admin token with a success envelope', async () => {
    const first = await serve();
    expect(first.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect(first.tokens.admin).toMatch(/^fsa_/);
    expect(first.tokens.user).toMatch(/^fsu_/);

    const reply = await workflowStates(first.url, `Admin ${first.tokens.admin}`);
    expect(reply.statusCode).toBe(200);
    expect(await reply.body.json()).toEqual({
      status: 'success',
      value: { team_id: 'ENG', states: [], updated_at: null },
    });

    const asUser = await workflowStates(first.url, `Bearer ${first.tokens.user}`);
    expect(asUser.statusCode).toBe(403);
    await asUser.body.dump();

    await first.stop();
    const second = await serve();
    expect(second.stdout()).not.toContain('token:');
    const again = await workflowStates(second.url, `Admin ${first.tokens.admin}`);
    expect(again.statusCode).toBe(200);
    await again.body.dump();

    const log = readFileSync(join(dir, 'service.log'), 'utf8');
    expect(log).toContain('"trace_id":"t1"');
    expect(log).not.toContain(first.tokens.admin);
    expect(log).not.toContain(first.tokens.user);
  });

  it('--new-tokens replaces the tokens: the old ones stop working', async () => {
    const first = await serve();
    await first.stop();
    const second = await serve('--new-tokens');
    expect(second.tokens.admin).not.toBe(first.tokens.admin);
    const old = await workflowStates(second.url, `Admin ${first.tokens.admin}`);
    expect(old.statusCode).toBe(401);
    await old.body.dump();
    const fresh = await workflowStates(second.url, `Admin ${second.tokens.admin}`);
    expect(fresh.statusCode).toBe(200);
    await fresh.body.dump();
  });
});
