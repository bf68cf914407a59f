import { performance } from 'node:perf_hooks';
import { narrowerRole, parseToken, tokenLabel, type Role } from '../../protocol/index.ts';
import type { ServiceDatabase } from '../db/open.ts';
import { DatabaseProblem } from '../errors.ts';
import { sha256Hex } from '../hash.ts';
import type { AccessTokens, Caller } from './access-tokens.ts';
import {
  MemberStore,
  RENEWED_BY,
  SHARED_MEMBERS,
  sameDigest,
  tokenEnd,
  type MemberRecord,
  type TokenRecord,
} from './members.ts';

/** Who a call comes from, decided by its credential before its body is read: the service's word, not the client's. */
export interface Principal {
  memberId: string;
  name: string;
  /** The member's role. */
  role: Role;
  /** What this call may do: the role, at most `write` on the Bearer scheme (an operator elevates with `Admin`). */
  level: Role;
  /** One of the shared tokens' members (the `fsu_`/`fsa_` tokens from before members). */
  shared: boolean;
  /** The member token's public id; null for a shared token. */
  tokenId: string | null;
  label: string | null;
  /** When the token was made (redeemed or renewed); null for a shared token. */
  issuedAt: string | null;
  expiresAt: string | null;
  /**
   * The token this one renewed, still working until this one's first use: the admission retires it (null: none,
   * or already retired).
   */
  replaces: string | null;
}

export type Identified =
  { ok: true; principal: Principal } | { ok: false; message: string; data: Record<string, unknown> };

export interface CredentialOptions {
  /** How often the list's epoch is read (every process): the bound on a revocation made by another process. */
  pollMs: number;
  /** A list not confirmed within this long is not trusted: calls wait for a confirmation, then are refused (503). */
  freshMs: number;
  /**
   * Whether a list that could not be confirmed refuses calls: on Postgres, where other processes change it and a
   * process can lose its database. Not on SQLite: one process serves the file and its own changes apply before it
   * answers them; a read of the epoch there waits only for the call being written (a 30,000-file ingest takes
   * seconds), and refusing every call meanwhile would protect nothing. A change made with `--db` beside it is
   * still taken at the next poll.
   */
  failClosed: boolean;
  /**
   * The member the shared tokens act as instead of the shared members: the embedded service's one member, named
   * after the OS user (MemberStore.ensureOwner), so a single developer's history shows their name. Null: `serve`.
   */
  ownerId?: string | null;
}

/** 250 ms polls and a 1 s freshness bound: a member removed on one process is refused by every other within 1 s. */
export const DEFAULT_CREDENTIAL_OPTIONS: CredentialOptions = { pollMs: 250, freshMs: 1000, failClosed: true };

const UNKNOWN: Identified = {
  ok: false,
  message: 'Unknown token: sign in again with "flowsync login".',
  data: {},
};

/**
 * Every process's list of who may call: the members and their tokens (and the shared tokens), kept in memory so a
 * call is admitted on its head with one Map lookup, one SHA-256 and one constant-time compare. Kept fresh by
 * polling `members_epoch` (every change bumps it, store/members.ts) and by `membersChanged()`, which this process
 * calls after its own changes (before answering) and which Postgres's LISTEN is to call for other processes'
 * changes. A list that could not be confirmed within `freshMs` is not trusted: the call is refused (fail closed).
 */
export class Credentials {
  private members = new Map<string, MemberRecord>();
  private tokens = new Map<string, TokenRecord>();
  private epoch = -1;
  /** performance.now() when the last confirmation's read was sent: the list is at least as new as then. */
  private confirmedAt = Number.NEGATIVE_INFINITY;
  private tail: Promise<void> = Promise.resolve();
  private queued: { promise: Promise<void>; force: boolean } | null = null;
  private timer: NodeJS.Timeout | undefined;
  /** Why the last read of the list failed (for the log of a refused call), null once one succeeds. */
  problem: string | null = null;

  constructor(
    private readonly db: ServiceDatabase,
    private readonly legacy: AccessTokens,
    private readonly options: CredentialOptions = DEFAULT_CREDENTIAL_OPTIONS,
  ) {}

  /** Reads the list once and then polls it (a failed poll leaves the list unconfirmed; the next may succeed). */
  async start(): Promise<void> {
    await this.confirm(true);
    this.timer = setInterval(() => void this.confirm().catch(() => undefined), this.options.pollMs);
    this.timer.unref();
  }

  stop(): void {
    clearInterval(this.timer);
  }

  /**
   * The list changed (this process changed it, or another process said so): read it again now. Resolves once the
   * new list is in use, so a change's caller is answered only when this process already refuses what it revoked.
   */
  membersChanged(): Promise<void> {
    return this.confirm(true);
  }

  /** Whether the list was confirmed within `freshMs`. */
  fresh(): boolean {
    return performance.now() - this.confirmedAt <= this.options.freshMs;
  }

  /**
   * True when the list is fresh, or becomes so within `freshMs` (one read of the epoch, and of the list when it
   * moved); false when it cannot be confirmed in that time (the database does not answer): refuse the call.
   */
  async ensureFresh(): Promise<boolean> {
    if (this.fresh() || !this.options.failClosed) return true;
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<false>((resolve) => {
      timer = setTimeout(() => resolve(false), this.options.freshMs);
    });
    try {
      const confirmed = this.confirm().then(
        () => true,
        () => false,
      );
      const fresh = (await Promise.race([confirmed, late])) && this.fresh();
      if (!fresh) this.problem ??= `the database did not answer within ${this.options.freshMs} ms`;
      return fresh;
    } finally {
      clearTimeout(timer);
    }
  }

  /**
   * One read of the list, after any read already under way (so that lists are applied in the order they were
   * read); a read asked for while one waits to start is that one.
   */
  private confirm(force = false): Promise<void> {
    if (this.queued) {
      this.queued.force ||= force;
      return this.queued.promise;
    }
    const entry = { force, promise: Promise.resolve() };
    entry.promise = this.tail.then(() => {
      this.queued = null;
      return this.read(entry.force);
    });
    this.queued = entry;
    this.tail = entry.promise.catch(() => undefined);
    return entry.promise;
  }

  private async read(force: boolean): Promise<void> {
    try {
      await this.readList(force);
      this.problem = null;
    } catch (error) {
      // Its words only when they are the database's, said for people (never a password); else what it means.
      this.problem = error instanceof DatabaseProblem ? error.message : 'the database did not answer';
      throw error;
    }
  }

  private async readList(force: boolean): Promise<void> {
    const sent = performance.now();
    const epoch = await this.db.read((sql) => new MemberStore(sql).epoch());
    if (force || epoch !== this.epoch) {
      const all = await this.db.read((sql) => new MemberStore(sql).loadAll());
      await this.legacy.reload();
      this.members = new Map(all.members.map((member) => [member.id, member]));
      this.tokens = new Map(all.tokens.map((token) => [token.id, token]));
      this.epoch = epoch;
    }
    this.confirmedAt = Math.max(this.confirmedAt, sent);
  }

  /**
   * Who presents `token` on the `claimed` scheme: a member token is found by its public id and its digest compared
   * in constant time; a shared token as before (the scheme must be its kind's). Revoked, removed and expired are
   * said only to a caller whose secret matched (the holder proves it is theirs), with when.
   */
  identify(claimed: Caller, token: string, now = Date.now()): Identified {
    const parsed = parseToken(token);
    if (parsed.ok && parsed.kind === 'invite')
      return {
        ok: false,
        message:
          'That is an invite, not a token: it opens only redeem_invite. Redeem it with `flowsync login --invite`.',
        data: { credential: 'invite' },
      };
    if (parsed.ok) {
      const row = this.tokens.get(parsed.id);
      if (!row || !sameDigest(row.sha256, sha256Hex(token))) return UNKNOWN;
      const member = this.members.get(row.member_id);
      if (!member) return UNKNOWN;
      const named = tokenLabel('member', row.id);
      const again =
        'Nothing of yours is lost: ask an operator for a new invite, then `flowsync login --invite`.';
      if (member.removed_at)
        return refusal(
          'removed',
          member.removed_at,
          `Your token ${named} was revoked: ${member.name} was removed from this service at ${member.removed_at}. ${again}`,
        );
      if (row.revoked_at && row.revoked_by === RENEWED_BY)
        return refusal(
          'revoked',
          row.revoked_at,
          `Your token ${named} was renewed, and replaced at ${row.revoked_at} by its new token's first use: flowsync's agent keeps the new one in the keychain (\`flowsync whoami\` names it).`,
        );
      if (row.revoked_at)
        return refusal(
          'revoked',
          row.revoked_at,
          `Your token ${named} was revoked at ${row.revoked_at}. ${again}`,
        );
      // A renewed token ends a day after its renewal at most (its new one not used meanwhile: store/members.ts).
      const ends = tokenEnd(row);
      if (Date.parse(ends) <= now)
        return refusal('expired', ends, `Your token ${named} expired at ${ends}. ${again}`);
      return {
        ok: true,
        principal: {
          memberId: member.id,
          name: member.name,
          role: member.role,
          level: claimed === 'admin' ? member.role : narrowerRole(member.role, 'write'),
          shared: false,
          tokenId: row.id,
          label: row.label,
          issuedAt: row.created_at,
          expiresAt: ends,
          replaces:
            row.renewed_from !== null && this.tokens.get(row.renewed_from)?.revoked_at === null
              ? row.renewed_from
              : null,
        },
      };
    }
    const kind = this.legacy.identify(token);
    if (kind === null || kind !== claimed) return UNKNOWN;
    const owner = this.options.ownerId ? this.members.get(this.options.ownerId) : undefined;
    if (owner && !owner.removed_at)
      return {
        ok: true,
        principal: {
          memberId: owner.id,
          name: owner.name,
          role: owner.role,
          level: kind === 'admin' ? owner.role : narrowerRole(owner.role, 'write'),
          shared: false,
          tokenId: null,
          label: null,
          issuedAt: null,
          expiresAt: null,
          replaces: null,
        },
      };
    const shared = SHARED_MEMBERS[kind];
    const member = this.members.get(shared.id) ?? { ...shared, shared: true, removed_at: null };
    if (member.removed_at)
      return refusal(
        'removed',
        member.removed_at,
        `The shared ${kind} token was retired at ${member.removed_at}: ask an operator for an invite of your own, then \`flowsync login --invite\`.`,
      );
    return {
      ok: true,
      principal: {
        memberId: member.id,
        name: member.name,
        role: member.role,
        level: kind === 'admin' ? member.role : narrowerRole(member.role, 'write'),
        shared: true,
        tokenId: null,
        label: null,
        issuedAt: null,
        expiresAt: null,
        replaces: null,
      },
    };
  }

  /**
   * As `identify`, but a member token this process has not seen yet (redeemed a moment ago through another process)
   * is looked for again after one read of the epoch: a new token works at once on every process. The reads are the
   * queue's (one at a time, shared), so a flood of made-up ids costs a read per round trip at most.
   */
  async identifyFresh(claimed: Caller, token: string): Promise<Identified> {
    const found = this.identify(claimed, token);
    if (found.ok || found !== UNKNOWN) return found;
    const parsed = parseToken(token);
    if (!parsed.ok || parsed.kind !== 'member' || this.tokens.has(parsed.id)) return found;
    await this.confirm();
    return this.identify(claimed, token);
  }

  /**
   * The token a renewal replaced, retired at the new one's first use (store/members.ts `renew`), and this process's
   * list read again before the call goes on: from then on the old token is refused.
   */
  async retire(tokenId: string): Promise<void> {
    const retired = await this.db.transaction((sql) => new MemberStore(sql).retire(tokenId));
    if (retired) await this.membersChanged();
  }

  /** A member by id, as the list has it now (null: not known to this process). */
  member(id: string): MemberRecord | null {
    return this.members.get(id) ?? null;
  }
}

function refusal(credential: 'revoked' | 'removed' | 'expired', at: string, message: string): Identified {
  return { ok: false, message, data: { credential, at } };
}
