import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { KeychainSecretStore, normalizeServiceUrl } from '../../src/secrets/index.ts';
import { userEnv } from '../support/agent-process.ts';
import { runFlowsync } from '../support/cli.ts';
import { startTestService, type TestService } from '../support/service.ts';
import { VIEWER, deliver } from '../support/tracker.ts';

/**
 * `flowsync login --api-key`, as the README's quick start has it (issue 25): a key nobody registered was refused
 * with "an operator registers it with add_activity (key-created)". Now, with an admin token, it is registered to
 * the tracker user with the user's git email and the line says who they are; without one, the refusal says what
 * to do in the user's words. Runs under scripts/with-keychain.sh (the key is kept in the keychain).
 */
const SECRET = 'lin_api_login_for_ada_0042';
const keychain = new KeychainSecretStore();

let dir: string;
let svc: TestService;
let env: NodeJS.ProcessEnv;

beforeEach(async () => {
  dir = mkdtempSync(join(tmpdir(), 'flowsync-login-key-'));
  svc = await startTestService();
  await deliver(svc, { action: 'create', type: 'User', data: VIEWER });
  const home = join(dir, 'home');
  env = { ...userEnv(home, svc), FLOWSYNC_API_KEY: '' };
  execFileSync('git', ['config', '--file', join(home, '.gitconfig'), 'user.email', VIEWER.email]);
});
afterEach(async () => {
  await keychain.delete(normalizeServiceUrl(svc.url), 'api-key');
  await svc.close();
  rmSync(dir, { recursive: true, force: true });
});

const ownerOfKey = () => svc.read(`SELECT user_id FROM api_keys WHERE suffix_4 = '0042'`);

describe('flowsync login --api-key', () => {
  it('registers a new key to the tracker user with your git email, and says who you are', async () => {
    const login = await runFlowsync(['login', '--api-key'], {
      stdin: SECRET,
      env: { ...env, FLOWSYNC_ADMIN_TOKEN: svc.tokens.admin },
    });
    expect(login.code, login.stderr).toBe(0);
    expect(login.stdout).toContain('You are Ada Lovelace (ada@example.com) in the tracker.');
    expect(ownerOfKey()).toEqual([{ user_id: VIEWER.id }]);
  });

  it("without an admin token, refuses an unknown key in one line of the user's words", async () => {
    const login = await runFlowsync(['login', '--api-key'], { stdin: SECRET, env });
    expect(login.code).toBe(1);
    expect(login.stderr.trim().split('\n')).toHaveLength(1);
    expect(login.stderr).toContain('does not know your personal API key yet: sign in with an admin token');
    expect(login.stderr).not.toMatch(/add_activity|key-created/);
    expect(ownerOfKey()).toEqual([]);
  });
});
