import { describe, expect, it } from 'vitest';
import { RENEW_BEFORE_MS, renewalTime, type TokenFacts } from '../../src/agent/index.ts';

const DAY = 86_400_000;
const issued = '2026-01-01T00:00:00.000Z';
const after = (ms: number) => new Date(Date.parse(issued) + ms).toISOString();

/** When the agent renews its token (issue 48): pure, so each rule is a row. */
describe('renewalTime', () => {
  const rows: { description: string; token: TokenFacts; at: number | null }[] = [
    {
      description: "a writer's 365-day token: 30 days before it expires",
      token: { expiresAt: after(365 * DAY), issuedAt: issued, role: 'write', shared: false },
      at: Date.parse(issued) + 335 * DAY,
    },
    {
      description: "a reader's token too (renewing is the token's own, whatever its role allows)",
      token: { expiresAt: after(365 * DAY), issuedAt: issued, role: 'read', shared: false },
      at: Date.parse(issued) + 335 * DAY,
    },
    {
      description: 'a 30-day token: a third of its life before (else renewed at every look)',
      token: { expiresAt: after(30 * DAY), issuedAt: issued, role: 'write', shared: false },
      at: Date.parse(issued) + 20 * DAY,
    },
    {
      description: 'a 9-second token (a test): 3 s before',
      token: { expiresAt: after(9000), issuedAt: issued, role: 'write', shared: false },
      at: Date.parse(issued) + 6000,
    },
    {
      description: 'a service that does not say when it was made: 30 days before',
      token: { expiresAt: after(365 * DAY), issuedAt: null, role: 'write', shared: false },
      at: Date.parse(issued) + 335 * DAY,
    },
    {
      description: "an operator's token: never by itself (doctor warns; a new invite replaces it)",
      token: { expiresAt: after(90 * DAY), issuedAt: issued, role: 'operator', shared: false },
      at: null,
    },
    {
      description: 'the shared token: never (it does not expire)',
      token: { expiresAt: null, issuedAt: null, role: 'write', shared: true },
      at: null,
    },
  ];
  it.each(rows)('$description', ({ token, at }) => {
    expect(renewalTime(token)).toBe(at);
  });

  it('takes a window of its own (FLOWSYNC_TOKEN_RENEW_BEFORE_MS)', () => {
    const token = { expiresAt: after(365 * DAY), issuedAt: issued, role: 'write' as const, shared: false };
    expect(renewalTime(token, 100 * DAY)).toBe(Date.parse(issued) + 265 * DAY);
    expect(RENEW_BEFORE_MS).toBe(30 * DAY);
  });
});
