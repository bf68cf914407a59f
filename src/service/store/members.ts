import { randomBytes, timingSafeEqual } from 'node:crypto';
import {
  base62FromBytes,
  formatToken,
  memberNameProblem,
  tokenLabel,
  TOKEN_ID_LENGTH,
  TOKEN_SECRET_LENGTH,
  type MemberRow,
  type Role,
  type TokenKind,
} from '../../protocol/index.ts';
import { tunable } from '../../host/index.ts';
import type { Sql } from '../db/open.ts';
import { nowIso } from '../clock.ts';
import { CallRefused } from '../errors.ts';
import { sha256Hex } from '../hash.ts';

/**
 * The members whose rows the shared tokens (`fsu_` user, `fsa_` admin, from before members) act as: created at
 * start, `shared = 1`. Their writes say "shared token"; `member remove shared` retires the shared user token.
 */
export const SHARED_MEMBERS = {
  user: { id: 'shared', name: 'shared', role: 'write' },
  admin: { id: 'shared-operator', name: 'shared-operator', role: 'operator' },
} as const;

/** The id of the embedded service's one member, named after the OS user (MemberStore.ensureOwner). */
export const OWNER_ID = 'owner';

/** An invite works once, for this long (Tailscale's one-off keys are the model). */
export const INVITE_HOURS = 24;
/** Wrong secrets for an invite's id after which it is voided (someone is guessing, or a copy went astray). */
export const INVITE_MAX_FAILURES = 5;

/** Days a redeemed token lasts unless the invite says: an operator's shorter, as its reach is wider. */
export function defaultTokenDays(role: Role): number {
  return role === 'operator' ? 90 : 365;
}

/**
 * Who made a change: a member (by id), or someone with the database itself (`--db`: `local:user@host`), which the
 * audit and `member list` show as local access, not a member.
 */
export type Actor = { memberId: string } | { local: string };

export function actorText(actor: Actor): string {
  return 'memberId' in actor ? actor.memberId : `local:${actor.local}`;
}

export interface MemberRecord {
  id: string;
  name: string;
  role: Role;
  shared: boolean;
  removed_at: string | null;
}

export interface TokenRecord {
  id: string;
  member_id: string;
  sha256: string;
  label: string;
  created_at: string;
  expires_at: string;
  revoked_at: string | null;
  /** Who revoked it: an actor, or RENEWED_BY when the token that renewed it was first used. */
  revoked_by: string | null;
  /** The token this one renewed, which works until this one is first used (or RENEWAL_OVERLAP_HOURS pass). */
  renewed_from: string | null;
  /** When this token was last renewed: it works until RENEWAL_OVERLAP_HOURS after, at most (tokenEnd). */
  renewed_at: string | null;
}

/** When a token stops working: its expiry, or RENEWAL_OVERLAP_HOURS after its renewal when that comes first. */
export function tokenEnd(token: { expires_at: string; renewed_at: string | null }): string {
  if (token.renewed_at === null) return token.expires_at;
  const overlapEnds = addHours(token.renewed_at, RENEWAL_OVERLAP_HOURS);
  return overlapEnds < token.expires_at ? overlapEnds : token.expires_at;
}

/** `revoked_by` of a token retired because the token that renewed it was used: not a person's doing. */
export const RENEWED_BY = 'renewed';

/**
 * How long a renewed token keeps working beside the new one at most: the agent may crash between the service's
 * commit and its keychain's write, and then still holds only the old one (it renews again with it).
 */
export const RENEWAL_OVERLAP_HOURS = 24;

/** What a renewal made: the new token (shown once) and until when the old one still works. */
export interface Renewed {
  member: string;
  role: Role;
  token: string;
  tokenId: string;
  label: string;
  expiresAt: string;
  oldExpiresAt: string;
}

export type RedeemOutcome =
  | {
      ok: true;
      memberId: string;
      member: string;
      role: Role;
      token: string;
      tokenId: string;
      expiresAt: string;
    }
  /** `voidedNow`: this wrong secret was the one that voided the invite. */
  | { ok: false; why: 'unknown' | 'used' | 'expired' | 'voided'; at: string | null; voidedNow?: boolean };

/** A new random id or secret: base62 of the length asked, from the OS's random source. */
export function randomBase62(length: number): string {
  for (;;) {
    // 2× the bytes: about 3% are dropped (≥ 248), so one draw almost always suffices.
    const drawn = base62FromBytes(randomBytes(length * 2), length);
    if (drawn) return drawn;
  }
}

/** A new token of `kind`: its public id, the whole token (shown once) and its SHA-256 (all that is kept). */
export function newToken(kind: TokenKind): { id: string; token: string; sha256: string } {
  const id = randomBase62(TOKEN_ID_LENGTH);
  const token = formatToken(kind, id, randomBase62(TOKEN_SECRET_LENGTH));
  return { id, token, sha256: sha256Hex(token) };
}

/** Whether two hex digests are equal, compared in constant time. */
export function sameDigest(a: string, b: string): boolean {
  const left = Buffer.from(a, 'hex');
  const right = Buffer.from(b, 'hex');
  return left.length === right.length && left.length > 0 && timingSafeEqual(left, right);
}

/**
 * How long one day of a token's life is: a day, or what FLOWSYNC_TOKEN_DAY_MS says (a test makes a 3-day token
 * last 3 s, and sees it expire and be renewed by a running agent). Read at each use, as a test sets it per process.
 */
function tokenDayMs(): number {
  return tunable('FLOWSYNC_TOKEN_DAY_MS', 86_400_000);
}

function addDays(now: string, days: number): string {
  return new Date(Date.parse(now) + days * tokenDayMs()).toISOString();
}

function addHours(now: string, hours: number): string {
  return new Date(Date.parse(now) + hours * 3_600_000).toISOString();
}

/**
 * Members, their tokens and invites, in the database. Only SHA-256 digests of tokens and invites are stored; a
 * token exists in clear once, in the answer to the redeem that made it. Every change bumps `members_epoch` in the
 * same transaction, so every service process sees that its list of members is out of date (store/credentials.ts).
 * Not a transaction itself: the caller wraps each change in one.
 */
/** The channel a change of the members' list is told on (create-service.ts listens). */
export const MEMBERS_CHANNEL = 'flowsync_members';

export class MemberStore {
  constructor(private readonly sql: Sql) {}

  /** The shared tokens' members, made once (two processes at a new database's first start: one makes them). */
  async ensureShared(now = nowIso()): Promise<void> {
    for (const member of Object.values(SHARED_MEMBERS)) {
      await this.sql.run(
        `INSERT INTO members (id, name, role, shared, created_at) VALUES (?, ?, ?, 1, ?)
         ON CONFLICT (id) DO NOTHING`,
        [member.id, member.name, member.role, now],
      );
    }
  }

  /**
   * The embedded service's one member: an operator named after the OS user, whom its shared tokens act
   * as, so that its history shows a name. Made once, under a fixed id (a later start with another OS user name keeps
   * the first); null when the name is another member's (a database `flowsync serve` shares with a team), or the
   * member was removed: the shared tokens then stay the shared members.
   */
  async ensureOwner(name: string, now = nowIso()): Promise<string | null> {
    await this.sql.run(
      `INSERT INTO members (id, name, role, shared, created_at, created_by) VALUES (?, ?, 'operator', 0, ?, 'system')
       ON CONFLICT DO NOTHING`,
      [OWNER_ID, name, now],
    );
    const row = await this.sql.get<{ removed_at: string | null }>(
      'SELECT removed_at FROM members WHERE id = ?',
      [OWNER_ID],
    );
    return row && row.removed_at === null ? OWNER_ID : null;
  }

  async epoch(): Promise<number> {
    const row = await this.sql.get<{ epoch: number | string }>(
      'SELECT epoch FROM members_epoch WHERE id = 1',
    );
    return Number(row?.epoch ?? 0);
  }

  /**
   * Tells every service process its list of members changed: the number they poll, in the transaction of the change
   * (committed with it, or not at all). The LISTEN/NOTIFY accelerator is hooked here: a `notify` on this same
   * transaction, delivered at commit, makes the other processes call `membersChanged()` at once.
   */
  async bumpEpoch(): Promise<void> {
    await this.sql.run('UPDATE members_epoch SET epoch = epoch + 1 WHERE id = 1');
    await this.sql.notify(MEMBERS_CHANNEL);
  }

  async byName(name: string): Promise<MemberRecord | null> {
    const row = await this.sql.get<MemberRecord & { shared: number | boolean }>(
      'SELECT id, name, role, shared, removed_at FROM members WHERE name = ?',
      [name],
    );
    return row ? { ...row, shared: Boolean(row.shared) } : null;
  }

  /** A member by name, who must be there and not removed; refused (422) in a line that says what to do. */
  async active(name: string): Promise<MemberRecord> {
    const member = await this.byName(name);
    if (!member)
      throw new CallRefused(`No member named ${name} on this service: \`flowsync service member list\`.`);
    if (member.removed_at)
      throw new CallRefused(
        `${name} was removed at ${member.removed_at}: add them again with \`member add\`.`,
      );
    return member;
  }

  /**
   * A new member, or a removed one again (members are never deleted: their name stays on their history). Refused
   * when the name is taken by an active member, or is not a name.
   */
  async add(name: string, role: Role, actor: Actor, now = nowIso()): Promise<MemberRecord> {
    const problem = memberNameProblem(name);
    if (problem) throw new CallRefused(problem, { path: ['name'] });
    const found = await this.byName(name);
    if (found && !found.removed_at)
      throw new CallRefused(
        `${name} is already a member (${found.role}): \`flowsync service member invite ${name}\` makes another invite for them.`,
        { path: ['name'] },
      );
    if (found) {
      await this.sql.run('UPDATE members SET role = ?, removed_at = NULL, removed_by = NULL WHERE id = ?', [
        role,
        found.id,
      ]);
    } else {
      await this.sql.run(
        'INSERT INTO members (id, name, role, shared, created_at, created_by) VALUES (?, ?, ?, 0, ?, ?)',
        [`m_${randomBase62(TOKEN_ID_LENGTH)}`, name, role, now, actorText(actor)],
      );
    }
    await this.bumpEpoch();
    return (await this.byName(name))!;
  }

  /** A one-time invite for a member (24 h): the invite text, shown once; only its digest is kept. */
  async invite(
    member: MemberRecord,
    tokenDays: number,
    actor: Actor,
    now = nowIso(),
  ): Promise<{ invite: string; id: string; expiresAt: string }> {
    if (member.shared)
      throw new CallRefused(`${member.name} is the shared tokens' member: it takes no invites.`, {
        path: ['name'],
      });
    const made = newToken('invite');
    const expiresAt = addHours(now, INVITE_HOURS);
    await this.sql.run(
      `INSERT INTO invites (id, member_id, sha256, token_days, created_at, created_by, expires_at)
       VALUES (?, ?, ?, ?, ?, ?, ?)`,
      [made.id, member.id, made.sha256, tokenDays, now, actorText(actor), expiresAt],
    );
    return { invite: made.token, id: made.id, expiresAt };
  }

  /**
   * Redeems an invite for a token of its member: one winner however many redeem it at once, on any number of
   * processes — a conditional UPDATE that only a still-open invite matches (Postgres makes the second wait for the
   * first's commit, then finds it redeemed; SQLite has one writer at a time). A wrong secret for a known id counts
   * a failure and voids the invite at the fifth: the caller must commit this transaction even when it refuses.
   */
  async redeem(inviteId: string, digest: string, label: string, now = nowIso()): Promise<RedeemOutcome> {
    const invite = await this.sql.get<{
      member_id: string;
      sha256: string;
      token_days: number;
      expires_at: string;
      redeemed_at: string | null;
      voided_at: string | null;
      failures: number;
    }>(
      'SELECT member_id, sha256, token_days, expires_at, redeemed_at, voided_at, failures FROM invites WHERE id = ?',
      [inviteId],
    );
    if (!invite) return { ok: false, why: 'unknown', at: null };
    if (!sameDigest(invite.sha256, digest)) {
      await this.sql.run(
        `UPDATE invites SET failures = failures + 1,
           voided_at = CASE WHEN failures + 1 >= ? AND voided_at IS NULL THEN ? ELSE voided_at END
         WHERE id = ?`,
        [INVITE_MAX_FAILURES, now, inviteId],
      );
      const voided = invite.voided_at === null && invite.failures + 1 >= INVITE_MAX_FAILURES;
      return { ok: false, why: 'unknown', at: null, ...(voided && { voidedNow: true }) };
    }
    const member = await this.sql.get<{ name: string; role: Role; removed_at: string | null }>(
      'SELECT name, role, removed_at FROM members WHERE id = ?',
      [invite.member_id],
    );
    if (!member || member.removed_at) return { ok: false, why: 'voided', at: member?.removed_at ?? null };
    const made = newToken('member');
    const won = await this.sql.run(
      `UPDATE invites SET redeemed_at = ?, token_id = ?
       WHERE id = ? AND redeemed_at IS NULL AND voided_at IS NULL AND expires_at > ?`,
      [now, made.id, inviteId, now],
    );
    if (won === 0) {
      const after = await this.sql.get<{ redeemed_at: string | null; voided_at: string | null }>(
        'SELECT redeemed_at, voided_at FROM invites WHERE id = ?',
        [inviteId],
      );
      if (after?.redeemed_at) return { ok: false, why: 'used', at: after.redeemed_at };
      if (after?.voided_at) return { ok: false, why: 'voided', at: after.voided_at };
      return { ok: false, why: 'expired', at: invite.expires_at };
    }
    const expiresAt = addDays(now, Number(invite.token_days));
    await this.sql.run(
      `INSERT INTO member_tokens (id, member_id, sha256, label, created_at, expires_at)
       VALUES (?, ?, ?, ?, ?, ?)`,
      [made.id, invite.member_id, made.sha256, label, now, expiresAt],
    );
    await this.bumpEpoch();
    return {
      ok: true,
      memberId: invite.member_id,
      member: member.name,
      role: member.role,
      token: made.token,
      tokenId: made.id,
      expiresAt,
    };
  }

  /** Removes a member: every token of theirs revoked, every open invite voided. Never the last operator. */
  async remove(
    name: string,
    actor: Actor,
    now = nowIso(),
  ): Promise<{ member: string; tokensRevoked: number }> {
    const member = await this.active(name);
    if (member.role === 'operator') await this.refuseLastOperator(member);
    await this.sql.run('UPDATE members SET removed_at = ?, removed_by = ? WHERE id = ?', [
      now,
      actorText(actor),
      member.id,
    ]);
    const revoked = await this.sql.run(
      'UPDATE member_tokens SET revoked_at = ?, revoked_by = ? WHERE member_id = ? AND revoked_at IS NULL',
      [now, actorText(actor), member.id],
    );
    await this.sql.run(
      'UPDATE invites SET voided_at = ? WHERE member_id = ? AND redeemed_at IS NULL AND voided_at IS NULL',
      [now, member.id],
    );
    await this.bumpEpoch();
    return { member: member.name, tokensRevoked: revoked };
  }

  async setRole(name: string, role: Role): Promise<{ member: string; role: Role; was: Role }> {
    const member = await this.active(name);
    if (member.role === 'operator' && role !== 'operator') await this.refuseLastOperator(member);
    await this.sql.run('UPDATE members SET role = ? WHERE id = ?', [role, member.id]);
    await this.bumpEpoch();
    return { member: member.name, role, was: member.role };
  }

  /** Revokes one token (a lost laptop): the member's other tokens go on working. */
  async revokeToken(id: string, actor: Actor, now = nowIso()): Promise<{ tokenId: string; member: string }> {
    const found = await this.sql.get<{ member: string; revoked_at: string | null }>(
      `SELECT m.name AS member, t.revoked_at FROM member_tokens t JOIN members m ON m.id = t.member_id
       WHERE t.id = ?`,
      [id],
    );
    if (!found)
      throw new CallRefused(
        `No token ${tokenLabel('member', id)} on this service: \`member list\` shows them.`,
        {
          path: ['token_id'],
        },
      );
    if (!found.revoked_at) {
      await this.sql.run('UPDATE member_tokens SET revoked_at = ?, revoked_by = ? WHERE id = ?', [
        now,
        actorText(actor),
        id,
      ]);
      await this.bumpEpoch();
    }
    return { tokenId: id, member: found.member };
  }

  /**
   * A new token for the holder of `tokenId`: the same member (so never a wider role), the same label, as long a
   * life as the old one had. The old one works on until the new one is first used (the admission retires it,
   * `retire`) or RENEWAL_OVERLAP_HOURS pass; a renewal the holder never received (made again with the old token)
   * replaces the one before it, which nobody ever used.
   */
  async renew(tokenId: string, now = nowIso()): Promise<Renewed> {
    // First, so that two renewals with one token at once (on Postgres) wait for each other here: the second then
    // revokes the first's new token below, and one new token is left.
    await this.sql.run('UPDATE member_tokens SET renewed_at = ? WHERE id = ?', [now, tokenId]);
    const old = await this.sql.get<{
      member_id: string;
      label: string;
      created_at: string;
      expires_at: string;
      renewed_at: string | null;
      name: string;
      role: Role;
    }>(
      `SELECT t.member_id, t.label, t.created_at, t.expires_at, t.renewed_at, m.name, m.role
       FROM member_tokens t JOIN members m ON m.id = t.member_id WHERE t.id = ?`,
      [tokenId],
    );
    if (!old) throw new CallRefused(`No token ${tokenLabel('member', tokenId)} on this service.`);
    await this.sql.run(
      'UPDATE member_tokens SET revoked_at = ?, revoked_by = ? WHERE renewed_from = ? AND revoked_at IS NULL',
      [now, RENEWED_BY, tokenId],
    );
    const made = newToken('member');
    // Its own life, which its renewal does not shorten (the overlap is renewed_at's, not a new expires_at).
    const lifeMs = Math.max(0, Date.parse(old.expires_at) - Date.parse(old.created_at));
    const expiresAt = new Date(Date.parse(now) + lifeMs).toISOString();
    await this.sql.run(
      `INSERT INTO member_tokens (id, member_id, sha256, label, created_at, expires_at, renewed_from)
       VALUES (?, ?, ?, ?, ?, ?, ?)`,
      [made.id, old.member_id, made.sha256, old.label, now, expiresAt, tokenId],
    );
    await this.bumpEpoch();
    return {
      member: old.name,
      role: old.role,
      token: made.token,
      tokenId: made.id,
      label: old.label,
      expiresAt,
      oldExpiresAt: tokenEnd(old),
    };
  }

  /** The token a renewal replaced, once the new one is used: true when this call retired it (not another). */
  async retire(tokenId: string, now = nowIso()): Promise<boolean> {
    const retired = await this.sql.run(
      'UPDATE member_tokens SET revoked_at = ?, revoked_by = ? WHERE id = ? AND revoked_at IS NULL',
      [now, RENEWED_BY, tokenId],
    );
    if (retired > 0) await this.bumpEpoch();
    return retired > 0;
  }

  /** Every member, the removed ones too, with their tokens and how many invites are open. */
  async list(now = nowIso()): Promise<MemberRow[]> {
    const members = await this.sql.all<{
      id: string;
      name: string;
      role: Role;
      shared: number | boolean;
      created_at: string;
      removed_at: string | null;
    }>('SELECT id, name, role, shared, created_at, removed_at FROM members ORDER BY shared, name');
    const tokens = await this.sql.all<{
      id: string;
      member_id: string;
      label: string;
      created_at: string;
      expires_at: string;
      revoked_at: string | null;
    }>(
      'SELECT id, member_id, label, created_at, expires_at, revoked_at FROM member_tokens ORDER BY created_at, id',
    );
    const invites = await this.sql.all<{ member_id: string; n: number | string }>(
      `SELECT member_id, count(*) AS n FROM invites
       WHERE redeemed_at IS NULL AND voided_at IS NULL AND expires_at > ? GROUP BY member_id`,
      [now],
    );
    const open = new Map(invites.map((row) => [row.member_id, Number(row.n)]));
    return members.map((member) => ({
      name: member.name,
      role: member.role,
      shared: Boolean(member.shared),
      created_at: member.created_at,
      removed_at: member.removed_at,
      tokens: tokens
        .filter((token) => token.member_id === member.id)
        .map(({ member_id: _member, id, ...token }) => ({ id: tokenLabel('member', id), ...token })),
      invites_open: open.get(member.id) ?? 0,
    }));
  }

  /** What every process keeps in memory to admit calls: every member, and every token not revoked. */
  async loadAll(): Promise<{ members: MemberRecord[]; tokens: TokenRecord[] }> {
    const members = await this.sql.all<MemberRecord & { shared: number | boolean }>(
      'SELECT id, name, role, shared, removed_at FROM members',
    );
    const tokens = await this.sql.all<TokenRecord>(
      `SELECT id, member_id, sha256, label, created_at, expires_at, revoked_at, revoked_by, renewed_from,
         renewed_at
       FROM member_tokens`,
    );
    return { members: members.map((m) => ({ ...m, shared: Boolean(m.shared) })), tokens };
  }

  private async refuseLastOperator(member: MemberRecord): Promise<void> {
    const others = await this.sql.get<{ n: number | string }>(
      "SELECT count(*) AS n FROM members WHERE role = 'operator' AND removed_at IS NULL AND id <> ?",
      [member.id],
    );
    if (Number(others?.n ?? 0) === 0)
      throw new CallRefused(`${member.name} is the last operator: add another first.`, { path: ['name'] });
  }
}
