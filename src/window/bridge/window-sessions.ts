import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';

/** What a presented credential is: the agent's own token, a window's session, or nothing this bridge gave. */
export type Credential = 'agent' | 'session' | null;

/**
 * At most this many launch addresses wait to be opened; a new one drops the oldest. `flowsync ui --open` makes one
 * a run, so only a loop of them would ever reach it, and then the oldest is the one nobody will open.
 */
const WAITING_LAUNCHES = 16;

const digest = (text: string) => createHash('sha256').update(text).digest('hex');
const newSecret = () => randomBytes(24).toString('base64url');

/**
 * The bridge's credentials. The agent token (in the agent lock, 0600, and the desktop handshake) is for the agent's
 * own processes and is never printed. A window is opened with a launch token after `#` in its address: the page
 * trades it once for a session credential and takes it out of the address bar, so the copy the browser keeps in
 * its history, and one left on a terminal, is worth nothing. Sessions live as long as this bridge (this agent run).
 *
 * Only SHA-256 digests are kept, and looked up by digest: a map's lookup then compares digests, never the secret,
 * so its timing tells nothing about a valid one.
 */
export class WindowSessions {
  readonly agentToken = newSecret();
  private readonly agentDigest = Buffer.from(digest(this.agentToken), 'hex');
  private readonly launches = new Set<string>();
  private readonly sessions = new Set<string>();

  /** A new single-use launch token. */
  newLaunch(): string {
    const launch = newSecret();
    this.launches.add(digest(launch));
    if (this.launches.size > WAITING_LAUNCHES) this.launches.delete(this.launches.values().next().value!);
    return launch;
  }

  /** The session credential for a launch token not used yet; null for any other (the launch token dies here). */
  exchange(launch: string): string | null {
    if (!this.launches.delete(digest(launch))) return null;
    const session = newSecret();
    this.sessions.add(digest(session));
    return session;
  }

  /** Who presents this credential. */
  identify(presented: string): Credential {
    if (presented === '') return null;
    const presentedDigest = digest(presented);
    if (timingSafeEqual(Buffer.from(presentedDigest, 'hex'), this.agentDigest)) return 'agent';
    return this.sessions.has(presentedDigest) ? 'session' : null;
  }
}
