import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { doctorReportSchema, TOKEN_EXPIRES_HEADER } from '../../src/protocol/index.ts';
import { KeychainSecretStore } from '../../src/secrets/index.ts';
import { startAgentProcess, userEnv, writeAgentConfig, type AgentProcess } from '../support/agent-process.ts';
import { runFlowsync } from '../support/cli.ts';
import { redeemInvite } from '../support/members.ts';
import { eventually, makeRepo, type TestRepo } from '../support/repo.ts';
import { startServeProcess, type ServeProcess } from '../support/serve-process.ts';
import { callFunction } from '../support/service.ts';

/**
 * A member token's expiry and its renewal by a running agent (issue 48, T6), with a real `flowsync serve`, the real
 * CLI, a real agent and a real keychain. The service runs with FLOWSYNC_TOKEN_DAY_MS=1000: a day of a token's life
 * lasts a second, so a 9-day token expires 9 s after it is made, and the agent (which renews a third of a short
 * life before its end) renews it 3 s before.
 */
let dir: string;
let server: ServeProcess;
let repo: TestRepo;
let agent: AgentProcess | undefined;
const keychain = new KeychainSecretStore();
const base = { FLOWSYNC_URL: '', FLOWSYNC_TOKEN: '', FLOWSYNC_ADMIN_TOKEN: '', FLOWSYNC_API_KEY: '' };
let operator: string;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'flowsync-expiry-'));
  repo = makeRepo({ 'flows/ci/build.yml': 'build: 1\n' });
  server = await startServeProcess(join(dir, 'service.db'), join(dir, 'serve.log'), [], undefined, {
    FLOWSYNC_TOKEN_DAY_MS: '1000',
  });
  operator = `Admin ${server.tokens.admin}`;
}, 30_000);
afterAll(async () => {
  agent?.signal('SIGKILL');
  await agent?.exited;
  await server.stop();
  for (const kind of ['access-token', 'admin-token'] as const) await keychain.delete(server.url, kind);
  repo.cleanup();
  rmSync(dir, { recursive: true, force: true });
});

/** A member's invite for a token of `days` (seconds here). */
async function invite(name: string, days: number): Promise<string> {
  const added = await callFunction(server.url, operator, 'svc/members/private/add', {
    name,
    role: 'write',
    token_days: days,
  });
  expect(added.statusCode, JSON.stringify(added.body)).toBe(200);
  return (added.body.value as { invite: string }).invite;
}

const whoami = (token: string) =>
  callFunction(server.url, `Bearer ${token}`, 'svc/members/public/whoami', {});

describe(
  'a member token expires, and a running agent renews its own before it does',
  { timeout: 120_000 },
  () => {
    it('the agent renews the keychain’s token; the old one stops at the new one’s first use; sync goes on', async () => {
      const env: NodeJS.ProcessEnv = { ...userEnv(join(dir, 'alice')), ...base };
      const login = await runFlowsync(['login', '--url', server.url, '--invite', '--label', 'laptop'], {
        env,
        stdin: await invite('alice', 9),
      });
      expect(login.code, login.stderr).toBe(0);
      const first = (await keychain.get(server.url, 'access-token'))!;
      const reply = await whoami(first);
      const before = reply.body.value as { token: string; expires_at: string };
      expect(reply.headers[TOKEN_EXPIRES_HEADER]).toBe(before.expires_at);

      const agentEnv: NodeJS.ProcessEnv = {
        ...env,
        FLOWSYNC_URL: server.url,
        FLOWSYNC_SERVICE_CHECK_MS: '1000',
      };
      writeAgentConfig(agentEnv, [{ path: repo.root, owner: 'acme', name: 'app' }]);
      agent = startAgentProcess(['start', repo.root], agentEnv);
      await agent.waitFor(/Watching 1 repository/, 60_000);
      await agent.waitFor(
        new RegExp(
          `Your token ${before.token}… was renewed: fsm_[0-9A-Za-z]{10}… \\("laptop"\\) is in the OS keychain`,
        ),
        30_000,
      );
      const renewed = (await keychain.get(server.url, 'access-token'))!;
      expect(renewed).not.toBe(first);
      // The same member and role; the agent's look after writing it was its first use, which retired the old one.
      const now = await whoami(renewed);
      expect(now.body.value).toMatchObject({ member: 'alice', role: 'write', label: 'laptop' });
      await eventually(async () => {
        const old = await whoami(first);
        expect(old.statusCode).toBe(401);
        expect(old.body.errorData).toMatchObject({ credential: 'revoked' });
      }, 5000);

      // Past the first token's end, the agent still sends an edit (with whichever token it renewed to since).
      await sleep(Math.max(0, Date.parse(before.expires_at) - Date.now()) + 500);
      repo.write('flows/ci/build.yml', 'build: 2\n');
      await eventually(async () => {
        const token = (await keychain.get(server.url, 'access-token'))!;
        const files = await callFunction(server.url, `Bearer ${token}`, 'svc/flow_def/public/list_files', {
          repo_owner: 'acme',
          repo_name: 'app',
          with_content: true,
        });
        expect(JSON.stringify(files.body.value)).toContain('build: 2');
      }, 30_000);
      expect(agent.output()).not.toMatch(/expired|revoked|refuse|sign in/i);
      agent.signal('SIGTERM');
      await agent.exitWithin();
      agent = undefined;
    });

    it('a token past its end is refused with its date, and the CLI says what to do', async () => {
      const redeemed = await redeemInvite(server.url, await invite('bob', 2), 'ci');
      const { token, expires_at: expiresAt } = redeemed.body.value as { token: string; expires_at: string };
      await sleep(Math.max(0, Date.parse(expiresAt) - Date.now()) + 200);
      const refused = await whoami(token);
      expect(refused.statusCode).toBe(401);
      expect(refused.body.errorData).toMatchObject({ credential: 'expired', at: expiresAt });
      const cli = await runFlowsync(['whoami'], {
        env: { ...userEnv(join(dir, 'bob')), ...base, FLOWSYNC_URL: server.url, FLOWSYNC_TOKEN: token },
      });
      expect(cli.code).toBe(1);
      expect(cli.stderr).toContain(`expired at ${expiresAt}`);
      expect(cli.stderr).toContain('flowsync login --invite');
    });

    it('doctor and status warn 14 days before a token expires; status says who you are first', async () => {
      const redeemed = await redeemInvite(server.url, await invite('carol', 60), 'ci');
      const { token } = redeemed.body.value as { token: string };
      const env = {
        ...userEnv(join(dir, 'carol')),
        ...base,
        FLOWSYNC_URL: server.url,
        FLOWSYNC_TOKEN: token,
      };
      const doctor = await runFlowsync(['doctor', '--json'], { env });
      const line = doctorReportSchema
        .parse(JSON.parse(doctor.stdout))
        .find((check) => check.check === 'token');
      expect(line).toMatchObject({ verdict: 'warn' });
      expect(line!.message).toMatch(
        /^token: you are carol \(write\); token fsm_[0-9A-Za-z]{10}… "ci" expires \d{4}-\d\d-\d\d, in less than a day$/,
      );
      expect(line!.fix).toContain('svc/members/public/renew_token');

      // status: who you are first, then the token's end.
      const status = await runFlowsync(['status'], { env });
      const [first, second] = status.stdout.split('\n');
      expect(first).toBe(`service ${server.url} as carol (write)`);
      expect(second).toMatch(
        /^ {2}your token fsm_[0-9A-Za-z]{10}… expires \d{4}-\d\d-\d\d, in less than a day: `flowsync doctor` says what renews it$/,
      );
      const shared = await runFlowsync(['status'], { env: { ...env, FLOWSYNC_TOKEN: server.tokens.user } });
      expect(shared.stdout.split('\n')[0]).toBe(
        `service ${server.url} as the shared user token: your writes show as "shared token"`,
      );
    });

    it('on a service that does not renew (serve --no-self-renew), the agent says so once, and its token stays', async () => {
      const strict = await startServeProcess(
        join(dir, 'strict.db'),
        join(dir, 'strict.log'),
        ['--no-self-renew'],
        undefined,
        { FLOWSYNC_TOKEN_DAY_MS: '1000' },
      );
      const strictRepo = makeRepo({ 'flows/ci/build.yml': 'build: 1\n' });
      try {
        const added = await callFunction(
          strict.url,
          `Admin ${strict.tokens.admin}`,
          'svc/members/private/add',
          {
            name: 'gus',
            role: 'write',
            token_days: 9,
          },
        );
        const env: NodeJS.ProcessEnv = { ...userEnv(join(dir, 'gus')), ...base };
        const login = await runFlowsync(['login', '--url', strict.url, '--invite'], {
          env,
          stdin: (added.body.value as { invite: string }).invite,
        });
        expect(login.code, login.stderr).toBe(0);
        const token = await keychain.get(strict.url, 'access-token');
        const agentEnv: NodeJS.ProcessEnv = { ...env, FLOWSYNC_URL: strict.url };
        writeAgentConfig(agentEnv, [{ path: strictRepo.root, owner: 'acme', name: 'app' }]);
        agent = startAgentProcess(['start', strictRepo.root], agentEnv);
        await agent.waitFor(
          /This service does not renew tokens \(its operator runs `serve --no-self-renew`\): gus's token ends on/,
          30_000,
        );
        expect(await keychain.get(strict.url, 'access-token')).toBe(token);
        // Said once: the agent does not ask again.
        expect(agent.output().match(/does not renew tokens/g)).toHaveLength(1);
        agent.signal('SIGTERM');
        await agent.exitWithin();
        agent = undefined;
      } finally {
        await strict.stop();
        for (const kind of ['access-token', 'admin-token'] as const) await keychain.delete(strict.url, kind);
        strictRepo.cleanup();
      }
    });
  },
);
