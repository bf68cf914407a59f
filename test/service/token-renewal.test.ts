import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TOKEN_EXPIRES_HEADER } from '../../src/protocol/index.ts';
import { inviteMember, memberToken, redeemInvite } from '../support/members.ts';
import { callFunction, startTestService, type CallReply, type TestService } from '../support/service.ts';

/**
 * A member token's expiry and its renewal by its own holder (issue 48, T6, the service's side): every answer says
 * when the token expires; `renew_token` gives the same member a new token of the same role and label, as long a
 * life; the old one works until the new one is first used; a renewal made again with the old token (the agent
 * crashed before its keychain took the new one) replaces the one nobody used. A real service on 127.0.0.1.
 */
let svc: TestService;
let operator: string;
beforeAll(async () => {
  svc = await startTestService();
  operator = `Admin ${svc.sharedTokens.admin}`;
});
afterAll(async () => {
  await svc.close();
});

const whoami = (token: string) => callFunction(svc.url, `Bearer ${token}`, 'svc/members/public/whoami', {});
const renew = (token: string) =>
  callFunction(svc.url, `Bearer ${token}`, 'svc/members/public/renew_token', {});
interface Renewed {
  member: string;
  role: string;
  token: string;
  label: string;
  expires_at: string;
  replaces: string;
  replaced_expires_at: string;
}
const valueOf = <T>(reply: CallReply) => {
  expect(reply.statusCode, JSON.stringify(reply.body)).toBe(200);
  return reply.body.value as T;
};

describe('a member token: its expiry on every answer, its renewal', () => {
  it('every answer to a member token says when it expires; whoami says when it was made', async () => {
    const token = await memberToken(svc.url, operator, 'alice', 'write');
    const reply = await whoami(token);
    const value = valueOf<{ expires_at: string; issued_at: string }>(reply);
    expect(reply.headers[TOKEN_EXPIRES_HEADER]).toBe(value.expires_at);
    // 365 days for a writer.
    expect(Date.parse(value.expires_at) - Date.parse(value.issued_at)).toBe(365 * 86_400_000);
    const listed = await callFunction(svc.url, `Bearer ${token}`, 'svc/flow_def/public/list_flows', {
      repo_owner: 'acme',
      repo_name: 'app',
    });
    expect(listed.headers[TOKEN_EXPIRES_HEADER]).toBe(value.expires_at);
    // A refusal for the role still says it (the token is good, the function is not hers).
    const refused = await callFunction(svc.url, `Admin ${token}`, 'svc/members/private/list', {});
    expect(refused.statusCode).toBe(403);
    expect(refused.headers[TOKEN_EXPIRES_HEADER]).toBe(value.expires_at);
    // The shared tokens do not expire: no header.
    const shared = await callFunction(
      svc.url,
      `Bearer ${svc.sharedTokens.user}`,
      'svc/members/public/whoami',
      {},
    );
    expect(shared.headers[TOKEN_EXPIRES_HEADER]).toBeUndefined();
  });

  it('renews: same member, role and label, as long a life; the old one stops at the new one’s first use', async () => {
    const old = await memberToken(svc.url, operator, 'bob', 'read');
    const before = valueOf<{ token: string; issued_at: string; expires_at: string }>(await whoami(old));
    const renewed = valueOf<Renewed>(await renew(old));
    expect(renewed).toMatchObject({ member: 'bob', role: 'read', label: 'laptop', replaces: before.token });
    expect(renewed.token).not.toBe(old);
    expect(renewed.token.slice(0, 4)).toBe('fsm_');
    // The old one's overlap: 24 h at most, never past its own expiry.
    expect(Date.parse(renewed.replaced_expires_at) - Date.now()).toBeLessThanOrEqual(24 * 3_600_000);
    const after = valueOf<{ role: string; issued_at: string; expires_at: string }>(
      await whoami(renewed.token),
    );
    expect(after.role).toBe('read');
    expect(Date.parse(after.expires_at) - Date.parse(after.issued_at)).toBe(
      Date.parse(before.expires_at) - Date.parse(before.issued_at),
    );

    // whoami above was the new token's first use: the old one is refused from then on, saying why.
    const refused = await whoami(old);
    expect(refused.statusCode).toBe(401);
    expect(refused.body.errorData).toMatchObject({ credential: 'revoked' });
    expect(refused.body.errorMessage).toMatch(/was renewed, and replaced at .* by its new token's first use/);
    expect(valueOf<{ member: string }>(await whoami(renewed.token)).member).toBe('bob');

    const audit = await svc.call('svc/members/private/audit', { action: 'token_renewed' });
    expect(JSON.stringify(audit.body.value)).toContain(renewed.replaces.slice(0, 14));
  });

  it('the old token works on until the new one is used; renewed again, the unused new one is refused', async () => {
    const old = await memberToken(svc.url, operator, 'carol', 'write');
    const first = valueOf<Renewed>(await renew(old));
    // Not used yet: the old one still works (the agent may not have the new one in its keychain yet).
    expect((await whoami(old)).statusCode).toBe(200);
    const second = valueOf<Renewed>(await renew(old));
    // As long a life as the first renewal's: the old token's overlap does not shorten what it renews to.
    const life = (renewed: Renewed) =>
      Date.parse(renewed.expires_at) - Date.parse(renewed.replaced_expires_at);
    expect(Math.abs(life(second) - life(first))).toBeLessThan(5000);
    expect(Date.parse(second.expires_at) - Date.now()).toBeGreaterThan(364 * 86_400_000);
    const unused = await whoami(first.token);
    expect(unused.statusCode).toBe(401);
    expect(unused.body.errorData).toMatchObject({ credential: 'revoked' });
    expect((await whoami(second.token)).statusCode).toBe(200);
    expect((await whoami(old)).statusCode).toBe(401);
  });

  it('a shared token is not renewed; an invite is not a token to renew', async () => {
    const shared = await callFunction(
      svc.url,
      `Bearer ${svc.sharedTokens.user}`,
      'svc/members/public/renew_token',
      {},
    );
    expect(shared.statusCode).toBe(422);
    expect(shared.body.errorMessage).toMatch(/shared tokens do not expire/);
    const invite = await inviteMember(svc.url, operator, 'dave', 'write');
    expect((await renew(invite)).statusCode).toBe(401);
    expect((await redeemInvite(svc.url, invite)).statusCode).toBe(200);
  });

  it('a token past its expiry is refused with when, and cannot renew itself', async () => {
    // FLOWSYNC_TOKEN_DAY_MS: a day of a token's life lasts 1 s in this process (read at the redeem).
    process.env.FLOWSYNC_TOKEN_DAY_MS = '1000';
    let token: string;
    try {
      const added = await callFunction(svc.url, operator, 'svc/members/private/add', {
        name: 'erin',
        role: 'write',
        token_days: 1,
      });
      const redeemed = await redeemInvite(svc.url, (added.body.value as { invite: string }).invite);
      token = (redeemed.body.value as { token: string }).token;
    } finally {
      delete process.env.FLOWSYNC_TOKEN_DAY_MS;
    }
    const { expires_at: expiresAt } = valueOf<{ expires_at: string }>(await whoami(token));
    await sleep(Math.max(0, Date.parse(expiresAt) - Date.now()) + 50);
    for (const reply of [await whoami(token), await renew(token)]) {
      expect(reply.statusCode).toBe(401);
      expect(reply.body.errorData).toEqual({
        reason: 'unauthenticated',
        credential: 'expired',
        at: expiresAt,
      });
      expect(reply.body.errorMessage).toContain(`expired at ${expiresAt}`);
    }
  });
});

describe('a service whose operator turned self-renewal off (serve --no-self-renew)', () => {
  it('refuses renew_token with when the token ends and what to do; the token goes on until then', async () => {
    const strict = await startTestService({ selfRenew: false });
    try {
      const token = await memberToken(strict.url, `Admin ${strict.sharedTokens.admin}`, 'frank', 'write');
      const refused = await callFunction(strict.url, `Bearer ${token}`, 'svc/members/public/renew_token', {});
      expect(refused.statusCode).toBe(422);
      expect(refused.body.errorMessage).toMatch(
        /^This service does not renew tokens \(its operator runs `serve --no-self-renew`\): frank's token ends on \d{4}-\d\d-\d\d; ask an operator for a new invite before then\.$/,
      );
      expect(refused.body.errorData).toMatchObject({ self_renew: false });
      const still = await callFunction(strict.url, `Bearer ${token}`, 'svc/members/public/whoami', {});
      expect(still.statusCode).toBe(200);
    } finally {
      await strict.close();
    }
  });
});
