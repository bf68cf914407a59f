import { describe, expect, it } from 'vitest';
import { identitySaid } from '../../src/cli/commands/status-identity.ts';
import { tokenVerdict } from '../../src/cli/doctor/token.ts';
import type { WhoamiValue } from '../../src/protocol/index.ts';

const DAY = 86_400_000;
const now = Date.parse('2026-11-28T12:00:00.000Z');
const alice = (role: WhoamiValue['role'], expiresInMs: number): WhoamiValue => ({
  member: 'alice',
  role,
  shared: false,
  token: 'fsm_3kT9xQ2mB7',
  label: 'laptop',
  expires_at: new Date(now + expiresInMs).toISOString(),
});

/** doctor's token line (issue 48): who you are, and a warning 14 days before the token expires, with its fix. */
describe('the token verdict', () => {
  const rows: {
    description: string;
    who: WhoamiValue;
    fromEnvironment: boolean;
    verdict: string;
    message: string;
    fix: RegExp | null;
  }[] = [
    {
      description: 'a token with months left: passes, naming you',
      who: alice('write', 200 * DAY),
      fromEnvironment: false,
      verdict: 'pass',
      message: 'token: you are alice (write); token fsm_3kT9xQ2mB7… "laptop" expires 2027-06-16',
      fix: null,
    },
    {
      description: 'exactly 14 days and a minute left: not yet',
      who: alice('write', 14 * DAY + 60_000),
      fromEnvironment: false,
      verdict: 'pass',
      message: 'token: you are alice (write); token fsm_3kT9xQ2mB7… "laptop" expires 2026-12-12',
      fix: null,
    },
    {
      description: 'within 14 days, in the keychain: the running agent renews it',
      who: alice('write', 10 * DAY + 3_600_000),
      fromEnvironment: false,
      verdict: 'warn',
      message: 'token: you are alice (write); token fsm_3kT9xQ2mB7… "laptop" expires 2026-12-08, in 10 days',
      fix: /keep the agent running .* it renews the token/,
    },
    {
      description: 'within a day, from FLOWSYNC_TOKEN: renew_token, as the agent does not replace it',
      who: alice('read', 3_600_000),
      fromEnvironment: true,
      verdict: 'warn',
      message:
        'token: you are alice (read); token fsm_3kT9xQ2mB7… "laptop" expires 2026-11-28, in less than a day',
      fix: /FLOWSYNC_TOKEN: `flowsync call svc\/members\/public\/renew_token`/,
    },
    {
      description: "an operator's: a new invite (not renewed by itself)",
      who: alice('operator', 1 * DAY + 60_000),
      fromEnvironment: false,
      verdict: 'warn',
      message: 'token: you are alice (operator); token fsm_3kT9xQ2mB7… "laptop" expires 2026-11-29, in 1 day',
      fix: /flowsync service member invite alice/,
    },
    {
      description: 'the shared token: passes, saying writes show as "shared token"',
      who: { member: 'shared', role: 'write', shared: true, token: null, label: null, expires_at: null },
      fromEnvironment: true,
      verdict: 'pass',
      message: 'token: the shared user token (write): your writes show as "shared token"; it does not expire',
      fix: null,
    },
  ];
  it.each(rows)('$description', ({ who, fromEnvironment, verdict, message, fix }) => {
    const check = tokenVerdict(who, { fromEnvironment, now });
    expect(check).toMatchObject({ check: 'token', verdict, message });
    if (fix) expect(check.fix).toMatch(fix);
    else expect(check.fix).toBeNull();
  });
});

/** status's first line (issue 48): who the service takes you for, and the token's end 14 days before it. */
describe("status's identity lines", () => {
  const url = 'https://flows.example.com';
  it.each([
    {
      description: 'a member with months left: one line, name and role',
      who: alice('write', 200 * DAY),
      lines: [`service ${url} as alice (write)`],
    },
    {
      description: 'a member whose token ends within 14 days: a second line, pointing at doctor',
      who: alice('read', 3 * DAY + 60_000),
      lines: [
        `service ${url} as alice (read)`,
        '  your token fsm_3kT9xQ2mB7… expires 2026-12-01, in 3 days: `flowsync doctor` says what renews it',
      ],
    },
    {
      description: 'the shared token: said, with what it means for the history',
      who: { member: 'shared', role: 'write', shared: true, token: null, label: null, expires_at: null },
      lines: [`service ${url} as the shared user token: your writes show as "shared token"`],
    },
  ] as { description: string; who: WhoamiValue; lines: string[] }[])('$description', ({ who, lines }) => {
    expect(identitySaid(url, who, now)).toEqual(lines);
  });
});
