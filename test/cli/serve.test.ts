import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { request } from 'undici';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
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
