import { describe, expect, it } from 'vitest';
import { ProtocolError, RemoteError, TransportError, failureKind } from '../../src/client/index.ts';
import { failureOutcome, probeAnswered, signedOutLine } from '../../src/sync/engine-status.ts';

const PATH = 'svc/crypto/public/decrypt_aes_gcm';
const answer = (status: number) => new RemoteError(PATH, status, 'no', {}, 'trace-1');
const noAnswer = new TransportError('no answer', PATH, 'ECONNREFUSED', 1);

/**
 * The engine reads a failure once, through the client's `failureKind`: what makes a round 'unreachable' (probe
 * every 2-4 s) is exactly what a probe counts as no answer, and everything else backs off.
 */
describe("the engine's reading of a failed call", () => {
  it('probes, and does not back off, after no answer or a 408', () => {
    for (const error of [noAnswer, answer(408)]) {
      expect(failureKind(error)).toBe('unreachable');
      expect(failureOutcome(error, 'm')).toEqual({ kind: 'unreachable', phase: 'offline', message: 'm' });
      expect(probeAnswered(error)).toBe(false);
    }
  });

  it('backs off after an answer that says "not now" (unavailable: the service answered, it is not offline), and a probe that gets one lets the round run', () => {
    for (const error of [
      answer(429),
      answer(500),
      answer(503),
      answer(404),
      new ProtocolError('html', PATH, 200),
    ]) {
      expect(failureOutcome(error, 'm')).toEqual({ kind: 'refused', phase: 'unavailable', message: 'm' });
      expect(probeAnswered(error)).toBe(true);
    }
  });

  it('waits for a person after 401 and 403', () => {
    for (const error of [answer(401), answer(403)]) {
      expect(failureOutcome(error, 'm')).toEqual({ kind: 'refused', phase: 'unauthorized', message: 'm' });
      expect(probeAnswered(error)).toBe(true);
    }
  });

  it.each([
    {
      description: 'removed: the service says when; signed out, a call a minute',
      data: { credential: 'removed', at: '2026-11-28T03:00:00Z' },
      why: 'you were removed from this service at 2026-11-28T03:00:00Z',
    },
    {
      description: 'one token revoked (a lost laptop)',
      data: { credential: 'revoked', at: '2026-11-28T03:00:00Z' },
      why: 'your token was revoked at 2026-11-28T03:00:00Z',
    },
    {
      description: 'expired, the date not said',
      data: { credential: 'expired' },
      why: 'your token expired',
    },
  ])("a member's token that is over (issue 48): $description", ({ data, why }) => {
    const error = new RemoteError(PATH, 401, 'Your token was revoked', data, 'trace-1');
    const url = 'https://flows.example.com';
    const line = signedOutLine(url, {
      credential: data.credential as 'removed',
      at: (data as { at?: string }).at ?? null,
    });
    expect(line).toBe(
      `${url} no longer takes your token: ${why}. Nothing is sent, and your edits wait here: ask an operator ` +
        `for a new invite, then \`flowsync login --url ${url} --invite\`.`,
    );
    expect(failureOutcome(error, 'm', url)).toEqual({
      kind: 'refused',
      phase: 'unauthorized',
      message: line,
      signedOut: true,
    });
  });

  it('a 401 that names no end of the credential (a wrong token, a shared one) waits for a person as before', () => {
    for (const data of [{}, { credential: 'invite' }, { credential: 'unknown' }]) {
      const error = new RemoteError(PATH, 401, 'no', data, 'trace-1');
      expect(failureOutcome(error, 'm')).toEqual({ kind: 'refused', phase: 'unauthorized', message: 'm' });
    }
  });
});
