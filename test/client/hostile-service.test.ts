import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { startAgentProcess, userEnv, type AgentProcess } from '../support/agent-process.ts';
import { createClient, ProtocolError } from '../../src/client/index.ts';
import { FLOWSYNC_BIN } from '../support/cli.ts';
import { makeRepo, type TestRepo } from '../support/repo.ts';

/**
 * A service that is not ours, or no longer behaves: it answers the way an attacker or a broken proxy would. The
 * client is the real `flowsync call` process; what it does to memory is read from the kernel (its peak RSS).
 */
const MiB = 1024 * 1024;
const CALL = ['call', 'svc/repo_config/public/update', '--args', '{"owner":"acme","name":"app"}'];

let dir: string;
let server: Server;
let url: string;
let requests = 0;
let answer: (res: ServerResponse) => void;
const open = new Set<ServerResponse>();
const agents: AgentProcess[] = [];
const repos: TestRepo[] = [];

beforeEach(async () => {
  dir = mkdtempSync(join(tmpdir(), 'flowsync-hostile-'));
  requests = 0;
  server = createServer((req, res) => {
    requests++;
    open.add(res);
    res.on('close', () => open.delete(res));
    req.resume();
    req.on('end', () => answer(res));
  });
  await new Promise<void>((ready) => server.listen(0, '127.0.0.1', ready));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterEach(async () => {
  for (const agent of agents.splice(0)) {
    agent.signal('SIGKILL');
    await agent.exited;
  }
  for (const repo of repos.splice(0)) repo.cleanup();
  for (const res of open) res.destroy();
  await new Promise((done) => server.close(done));
  rmSync(dir, { recursive: true, force: true });
});

interface Run {
  code: number | null;
  stderr: string;
  /** The process's peak resident memory, in MiB (getrusage's maxrss, read as it exits). */
  peakMiB: number;
}

/** `flowsync call` against the hostile service, with a probe that reports its peak RSS on exit. */
function runCall(env: NodeJS.ProcessEnv = {}): Promise<Run> {
  const probe = join(dir, 'peak.cjs');
  writeFileSync(
    probe,
    "process.on('exit', () => process.stderr.write('\\nPEAK ' + process.resourceUsage().maxRSS + '\\n'));\n",
  );
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--require', probe, FLOWSYNC_BIN, ...CALL], {
      env: {
        ...process.env,
        ...userEnv(join(dir, 'home'), { url, tokens: { user: 'user-token' } }),
        ...env,
      },
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`flowsync call did not finish in 90 s: ${stderr}`));
    }, 90_000);
    child.on('close', (code) => {
      clearTimeout(timer);
      const peak = /\nPEAK (\d+)\n/.exec(stderr);
      resolve({
        code,
        stderr: stderr.replace(/\nPEAK \d+\n/, ''),
        peakMiB: peak ? Number(peak[1]) / 1024 : NaN,
      });
    });
  });
}

/** A JSON envelope that never ends: `{"status":"success","value":{"s":"xxxx…`, `bytes` of it, made as it is sent. */
function endlessJson(res: ServerResponse, bytes: number): void {
  res.writeHead(200, { 'content-type': 'application/json' });
  const chunk = Buffer.alloc(MiB, 'x');
  let sent = 0;
  const more = () => {
    if (sent === 0) {
      res.write('{"status":"success","value":{"s":"');
    }
    while (sent < bytes) {
      sent += chunk.length;
      if (!res.write(chunk)) {
        res.once('drain', more);
        return;
      }
    }
    res.end('"}}');
  };
  res.on('error', () => {});
  more();
}

describe('a hostile service', () => {
  it('a reply far larger than any real one: the call stops at the cap, says so in one line, memory stays bounded', async () => {
    // 640 MiB, five times the cap, streamed: the test never holds it.
    answer = (res) => endlessJson(res, 640 * MiB);
    const run = await runCall();
    expect(run.stderr.trim().split('\n')).toHaveLength(1);
    expect(run.stderr).toMatch(
      /^flowsync: The reply from http:\/\/127\.0\.0\.1:\d+ to .* is larger than 128 MiB/,
    );
    expect(run.code).toBe(3);
    // Not sent again: the same service would send the same reply.
    expect(requests).toBe(1);
    // 247 MiB measured: node and flowsync, plus what was read up to the cap. Unbounded: 1,440 MiB, 4 attempts.
    expect(run.peakMiB).toBeLessThan(450);
  }, 120_000);

  it('a reply that trickles one byte every 200 ms ends with a time-out that says what happened', async () => {
    answer = (res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.write('{"status":"success","value":');
      const drip = setInterval(() => res.write(' '), 200);
      res.on('close', () => clearInterval(drip));
    };
    const run = await runCall({ FLOWSYNC_TIMEOUT_MS: '1500' });
    expect(run.stderr.trim().split('\n')).toHaveLength(1);
    expect(run.stderr).toMatch(/^flowsync: No reply from http:\/\/127\.0\.0\.1:\d+ to .* within 1\.5 s/);
    expect(run.code).toBe(3);
  }, 120_000);

  it('the agent syncing with it: each sync stops at the cap, the repository says why, the agent stays small', async () => {
    answer = (res) => endlessJson(res, 640 * MiB);
    const repo = makeRepo({ 'flows/hello/main.yaml': 'hello\n' });
    repos.push(repo);
    const agent = startAgentProcess(
      ['start', repo.root],
      userEnv(join(dir, 'home'), { url, tokens: { user: 'user-token' } }),
    );
    agents.push(agent);
    await agent.waitFor(/Watching 1 repository/, 60_000);
    // Said in the repository's line at start, or, when the first round ended otherwise on a loaded machine (the
    // 640 MiB not read in time: offline), in the line of the next round's state.
    await agent.waitFor(
      /unavailable(?:, 1 file pending;.*)?: The reply from .* is larger than 128 MiB/,
      60_000,
    );
    expect(agent.output()).toMatch(/1 (?:file )?pending/);
    // The peak resident memory so far (VmHWM), from the kernel: 262 MiB measured. Unbounded, each sync held the
    // whole reply (and said "Cannot reach the service (ERR_STRING_TOO_LONG) after 2 attempts: is it running?").
    const peakKiB = Number(/VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${agent.pid}/status`, 'utf8'))?.[1]);
    expect(peakKiB / 1024).toBeLessThan(600);
  }, 120_000);

  it('a reply that declares more than the cap is refused from its headers, without waiting for the body', async () => {
    answer = (res) => {
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': String(2 * 1024 * MiB) });
      res.write('{"status":"success","value":');
    };
    // Read to the deadline instead, the call would end as a time-out after 20 s.
    const client = createClient({ baseUrl: url, auth: { userToken: 't' }, timeoutMs: 20_000 });
    const error = await client.repoConfig.update({ owner: 'a', name: 'b' }).catch((e: unknown) => e);
    await client.close();
    expect(error).toBeInstanceOf(ProtocolError);
    expect((error as Error).message).toMatch(/is larger than 128 MiB/);
    expect(requests).toBe(1);
  });
});
