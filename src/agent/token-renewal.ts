import { failureKind, RemoteError, type RemoteClient } from '../client/index.ts';
import { tunable } from '../host/index.ts';
import { tokenLabel, type Role, type WhoamiValue } from '../protocol/index.ts';
import type { SecretStore } from '../secrets/index.ts';

/** A member token is renewed this long before it expires, while the agent runs. */
export const RENEW_BEFORE_MS = 30 * 86_400_000;

/** A renewal that failed (the service away) is tried again after this long. */
const RETRY_MS = 10 * 60_000;

/**
 * The longest wait between two looks at the token: a day. setTimeout takes at most 2^31-1 ms (24.8 days; a
 * longer one fires at once), and a token renewed or revoked elsewhere meanwhile is seen the next day.
 */
const LONGEST_WAIT_MS = 86_400_000;

export interface TokenFacts {
  expiresAt: string | null;
  /** When it was made or last renewed (null: a service that does not say: the window alone times it). */
  issuedAt: string | null;
  role: Role;
  shared: boolean;
}

/**
 * When the agent renews its token (ms since the epoch), or null when it does not: 30 days before it expires, or a
 * third of its life before for a shorter-lived token (a 30-day token would else be renewed at every look). The
 * shared tokens do not expire; an operator's token is not renewed by itself (its reach is wider: an operator
 * makes a new invite when it nears its end, and doctor says so 14 days before).
 */
export function renewalTime(token: TokenFacts, windowMs = RENEW_BEFORE_MS): number | null {
  if (token.shared || token.expiresAt === null || token.role === 'operator') return null;
  const expires = Date.parse(token.expiresAt);
  const life = token.issuedAt === null ? Number.POSITIVE_INFINITY : expires - Date.parse(token.issuedAt);
  return expires - Math.min(windowMs, life / 3);
}

export interface TokenRenewalOptions {
  client: RemoteClient;
  secrets: SecretStore;
  /** The address the service's secrets are filed under in the keychain. */
  secretsUrl: string;
  /** Says a line to the user (the agent's output). */
  say: (line: string) => void;
}

/**
 * Keeps the agent's member token from expiring while it runs: asks `whoami` when the token expires, renews it at
 * renewalTime (function 41), writes the new one to the keychain (the client reads the keychain at every call, so
 * the next call uses it, and that first use retires the old one on the service), and looks again. A token from the
 * environment (FLOWSYNC_TOKEN) is not the agent's to replace: it is left alone, and `doctor` warns as it nears its
 * end. FLOWSYNC_TOKEN_RENEW_BEFORE_MS sets the window (tests).
 */
export class TokenRenewal {
  private timer: NodeJS.Timeout | null = null;
  private stopped = false;
  private readonly windowMs = tunable('FLOWSYNC_TOKEN_RENEW_BEFORE_MS', RENEW_BEFORE_MS);

  constructor(private readonly options: TokenRenewalOptions) {}

  start(): void {
    void this.look();
  }

  stop(): void {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
  }

  private later(ms: number, then: () => Promise<void>): void {
    if (this.stopped) return;
    this.timer = setTimeout(() => void then(), Math.max(0, Math.min(ms, LONGEST_WAIT_MS)));
    this.timer.unref();
  }

  /** Whether the token is the keychain's (the agent's to replace), and what the service says of it. */
  private async look(): Promise<void> {
    const { secrets, secretsUrl, client } = this.options;
    if (this.stopped) return;
    const { source } = await secrets.locate(secretsUrl, 'access-token').catch(() => ({ source: 'none' }));
    if (source !== 'keychain') return;
    let who: WhoamiValue;
    try {
      who = await client.members.whoami({});
    } catch (error) {
      // A service without members (404), or a token it refuses (the agent says that elsewhere): nothing to renew.
      if (error instanceof RemoteError && (error.statusCode === 404 || failureKind(error) === 'unauthorized'))
        return;
      return this.later(RETRY_MS, () => this.look());
    }
    const at = renewalTime(
      {
        expiresAt: who.expires_at,
        issuedAt: who.issued_at ?? null,
        role: who.role,
        shared: who.shared,
      },
      this.windowMs,
    );
    if (at === null) return;
    const wait = at - Date.now();
    this.later(wait, () => (wait <= LONGEST_WAIT_MS ? this.renew(who.token) : this.look()));
  }

  private async renew(old: string | null): Promise<void> {
    const { secrets, secretsUrl, client, say } = this.options;
    if (this.stopped) return;
    try {
      const renewed = await client.members.renewToken({});
      // The service keeps the old token working until the new one's first use (or 24 h): a crash before this write
      // leaves the old one, which renews again at the next start.
      await secrets.set(secretsUrl, 'access-token', renewed.token);
      const made = tokenLabel('member', renewed.token_id.replace(/^fsm_/, ''));
      say(
        `Your token ${old ? `${old}… ` : ''}was renewed: ${made} ("${renewed.label}") is in the OS keychain; it expires ${renewed.expires_at.slice(0, 10)}.`,
      );
    } catch (error) {
      if (error instanceof RemoteError && failureKind(error) === 'unauthorized') return;
      // The service does not renew (`serve --no-self-renew`): its sentence says until when, and what to do.
      if (error instanceof RemoteError && error.statusCode === 422) return say(error.errorMessage);
      return this.later(RETRY_MS, () => this.look());
    }
    // The look is the new token's first use: the service retires the old one now.
    await this.look();
  }
}
