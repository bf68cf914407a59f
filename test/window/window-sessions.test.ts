import { createHash, createHmac } from 'node:crypto';
import { beforeEach, describe, expect, it } from 'vitest';
import { SESSION_LIFETIME_MS, WindowSessions } from '../../src/window/bridge/window-sessions.ts';

/** A window's sessions: this run's only, kept nowhere (the next run's window has another address), ended after a month. */
let now: number;
const clock = () => now;
const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');

/** A session as a page gets one: a launch token traded once. */
function openWindow(sessions: WindowSessions): string {
  return sessions.exchange(sessions.newLaunch())!;
}

beforeEach(() => {
  now = Date.UTC(2026, 0, 1);
});

describe('WindowSessions', () => {
  it("lives for the agent's run only: the next run knows none of its sessions or tab credentials", () => {
    const sessions = new WindowSessions(clock);
    const session = openWindow(sessions);
    const tab = sessions.newTab();
    expect(sessions.identify(session)).toBe('session');
    expect(sessions.isTab(tab)).toBe(true);
    const next = new WindowSessions(clock);
    expect(next.identify(session)).toBe(null);
    expect(next.isTab(tab)).toBe(false);
    expect(next.prove(sha256(sha256(session)), 'a1b2c3d4e5f60718293a4b5c6d7e8f90', 41234)).toBe(null);
  });

  it('ends a session after its lifetime, even in a run that lasts longer', () => {
    const sessions = new WindowSessions(clock);
    const session = openWindow(sessions);
    now += SESSION_LIFETIME_MS - 1;
    expect(sessions.identify(session)).toBe('session');
    now += 1;
    expect(sessions.identify(session)).toBe(null);
  });

  it("proves it knows a session to a page that names it by its digest's digest, bound to the port", () => {
    const sessions = new WindowSessions(clock);
    const session = openWindow(sessions);
    const digest = sha256(session);
    const challenge = 'a1b2c3d4e5f60718293a4b5c6d7e8f90';
    const proof = sessions.prove(sha256(digest), challenge, 41234);
    // What the page computes with WebCrypto (renderer/src/api.ts, askAgent).
    expect(proof).toBe(createHmac('sha256', digest).update(`${challenge} 41234`).digest('hex'));
    expect(sessions.prove(sha256(digest), challenge, 41235)).not.toBe(proof);
    expect(sessions.prove(sha256(sha256('another')), challenge, 41234)).toBe(null);
    // The id is not a credential, nor is the digest.
    expect(sessions.identify(sha256(digest))).toBe(null);
    expect(sessions.identify(digest)).toBe(null);
    now += SESSION_LIFETIME_MS;
    expect(sessions.prove(sha256(digest), challenge, 41234)).toBe(null);
  });
});
