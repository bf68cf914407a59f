import { createHash, createHmac } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { readWindowMemory, writeWindowMemory } from '../../src/window/bridge/window-memory.ts';
import {
  SESSION_LIFETIME_MS,
  WindowSessions,
  type SessionStore,
} from '../../src/window/bridge/window-sessions.ts';

/** A window's sessions across the agent's runs: kept as digests in window.json, ended after their lifetime. */
let folder: string;
let path: string;
let now: number;
const clock = () => now;
const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');

/** The store the bridge gives a run's sessions: window.json, read once, replaced at each change. */
function fileStore(): SessionStore {
  const memory = readWindowMemory(path);
  return {
    load: () => memory.sessions,
    save: (sessions) => writeWindowMemory(path, { ...memory, sessions }),
  };
}

/** A session as a page gets one: a launch token traded once. */
function openWindow(sessions: WindowSessions): string {
  return sessions.exchange(sessions.newLaunch())!;
}

beforeEach(() => {
  folder = mkdtempSync(join(tmpdir(), 'flowsync-window-sessions-'));
  path = join(folder, 'data', 'window.json');
  now = Date.UTC(2026, 0, 1);
});
afterEach(() => rmSync(folder, { recursive: true, force: true }));

describe('WindowSessions', () => {
  it("outlives the agent's run through its store, which keeps the digest only, 0600 in 0700", () => {
    const session = openWindow(new WindowSessions(fileStore(), clock));
    const next = new WindowSessions(fileStore(), clock);
    expect(next.identify(session)).toBe('session');
    const text = readFileSync(path, 'utf8');
    expect(text).not.toContain(session);
    expect(text).toContain(sha256(session));
    expect(statSync(path).mode & 0o777).toBe(0o600);
    expect(statSync(join(folder, 'data')).mode & 0o777).toBe(0o700);
  });

  it('ends a session after its lifetime, in this run and the next, and drops it from the file', () => {
    const sessions = new WindowSessions(fileStore(), clock);
    const session = openWindow(sessions);
    now += SESSION_LIFETIME_MS - 1;
    expect(sessions.identify(session)).toBe('session');
    now += 1;
    expect(sessions.identify(session)).toBe(null);
    expect(new WindowSessions(fileStore(), clock).identify(session)).toBe(null);
    expect(readFileSync(path, 'utf8')).not.toContain(sha256(session));
  });

  it('takes a looser file back to 0600 at start, and starts empty from one it cannot read', () => {
    writeFileSync(join(folder, 'loose.json'), '{"port": 8384, "sessions": "not a list"}', { mode: 0o644 });
    path = join(folder, 'loose.json');
    new WindowSessions(fileStore(), clock);
    expect(statSync(path).mode & 0o777).toBe(0o600);
    expect(readWindowMemory(path)).toEqual({ port: 8384, sessions: [] });
  });

  it("proves it knows a session to a page that names it by its digest's digest, bound to the port", () => {
    const sessions = new WindowSessions(undefined, clock);
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
    sessions.endAll();
    expect(sessions.prove(sha256(digest), challenge, 41234)).toBe(null);
    expect(sessions.identify(session)).toBe(null);
  });
});
