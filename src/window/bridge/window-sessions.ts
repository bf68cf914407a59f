import { createHash, createHmac, randomBytes, timingSafeEqual } from 'node:crypto';

/** What a presented credential is: the agent's own token, a window's session, or nothing this bridge gave. */
export type Credential = 'agent' | 'session' | null;

/**
 * At most this many launch addresses wait to be opened; a new one drops the oldest. `flowsync ui --open` makes one
 * a run, so only a loop of them would ever reach it, and then the oldest is the one nobody will open.
 */
const WAITING_LAUNCHES = 16;

/**
 * How long a window's session lasts at most: a month, or the agent's run, whichever ends first (a window's address
 * is its run's alone: bridge.ts). After that `flowsync ui --open` opens a new one.
 */
export const SESSION_LIFETIME_MS = 30 * 24 * 60 * 60 * 1000;

/** Sessions kept at most; a new one drops the one that ends first. One per `ui --open` and reload is far fewer. */
const KEPT_SESSIONS = 64;

const digest = (text: string) => createHash('sha256').update(text).digest('hex');
const newSecret = () => randomBytes(24).toString('base64url');

/**
 * The bridge's credentials. The agent token (in the agent lock, 0600, and the desktop handshake) is for the agent's
 * own processes and is never printed. A window is opened with a launch token after `#` in its address: the page
 * trades it once for a session credential and takes it out of the address bar, so the copy the browser keeps in
 * its history, and one left on a terminal, is worth nothing. A session lasts for this run (SESSION_LIFETIME_MS at
 * most) and is kept nowhere on disk: the next run serves its window at another address, which no page of this one
 * reaches. The page keeps it in its memory only, never in storage that a page of the same address reads (another
 * user's program may serve the address once the agent is stopped, and the browser would keep it open, or reload the
 * window's tab into it). What a tab keeps for a reload is a tab credential (newTab), which ends with the run too.
 *
 * Only SHA-256 digests are kept, and looked up by digest: a map's lookup then compares digests, never the secret,
 * so its timing tells nothing about a valid one.
 */
export class WindowSessions {
  readonly agentToken = newSecret();
  private readonly agentDigest = Buffer.from(digest(this.agentToken), 'hex');
  private readonly launches = new Set<string>();
  /** Session digest → when it ends. */
  private readonly sessions = new Map<string, number>();
  /** Digests of this run's tab credentials, oldest first (never stored: they end with the run). */
  private readonly tabs = new Set<string>();

  constructor(private readonly now: () => number = Date.now) {}

  /** A new single-use launch token. */
  newLaunch(): string {
    const launch = newSecret();
    this.launches.add(digest(launch));
    if (this.launches.size > WAITING_LAUNCHES) this.launches.delete(this.launches.values().next().value!);
    return launch;
  }

  /** Whether this is a launch token not used yet (it stays so). */
  isLaunch(launch: string): boolean {
    return this.launches.has(digest(launch));
  }

  /** The session credential for a launch token not used yet; null for any other (the launch token dies here). */
  exchange(launch: string): string | null {
    if (!this.launches.delete(digest(launch))) return null;
    const session = newSecret();
    this.keep(session);
    return session;
  }

  /**
   * A tab credential for a page that holds a session (after a launch, a reload, or its agent's restart): what the
   * page keeps in its tab's sessionStorage, so that a reload of that tab opens the window again without a launch
   * address. It is valid in this run only: a copy read by whatever page the tab loaded while the agent was gone
   * (another user's, from the window's port) is worth nothing once the agent is back.
   */
  newTab(): string {
    const tab = newSecret();
    this.tabs.add(digest(tab));
    if (this.tabs.size > KEPT_SESSIONS) this.tabs.delete(this.tabs.values().next().value!);
    return tab;
  }

  /** Whether this is one of this run's tab credentials. */
  isTab(tab: string): boolean {
    return this.tabs.has(digest(tab));
  }

  /** A new session for a page whose tab presents this run's tab credential (a reload); null for any other. */
  reopen(tab: string): string | null {
    if (!this.isTab(tab)) return null;
    const session = newSecret();
    this.keep(session);
    return session;
  }

  /** Who presents this credential. */
  identify(presented: string): Credential {
    if (presented === '') return null;
    const presentedDigest = digest(presented);
    if (timingSafeEqual(Buffer.from(presentedDigest, 'hex'), this.agentDigest)) return 'agent';
    return this.live(presentedDigest) ? 'session' : null;
  }

  /**
   * The answer to a page that asks whether this is its agent before it sends its credential (after the agent
   * was gone, another program may have taken the port): an HMAC of the page's challenge and this bridge's port,
   * keyed by the session's digest, which only this agent and the page can compute. The page names its session by
   * the digest of the digest (`id`), which tells nobody the key. Null for a session that is unknown or ended.
   * The port is in the message so that a program on the window's old port cannot relay an agent's answer from
   * another port.
   */
  prove(id: string, challenge: string, port: number): string | null {
    for (const session of this.sessions.keys()) {
      if (digest(session) !== id) continue;
      if (!this.live(session)) return null;
      return createHmac('sha256', session).update(`${challenge} ${port}`).digest('hex');
    }
    return null;
  }

  private live(sessionDigest: string): boolean {
    const expires = this.sessions.get(sessionDigest);
    return expires !== undefined && expires > this.now();
  }

  /** A new session, without the ended ones, and at most KEPT_SESSIONS: the one that ends first goes. */
  private keep(session: string): void {
    this.sessions.set(digest(session), this.now() + SESSION_LIFETIME_MS);
    const live = [...this.sessions]
      .filter(([, expires]) => expires > this.now())
      .sort(([, a], [, b]) => b - a)
      .slice(0, KEPT_SESSIONS);
    this.sessions.clear();
    for (const [kept, expires] of live) this.sessions.set(kept, expires);
  }
}
