import { describe, expect, it } from 'vitest';
import { ProtocolError, RemoteError, TransportError, failureKind } from '../../src/client/index.ts';
import { failureOutcome, probeAnswered } from '../../src/sync/engine-status.ts';

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
});
