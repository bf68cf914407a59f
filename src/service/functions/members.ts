import { parseToken, tokenLabel, TOKEN_PREFIXES, type Role } from '../../protocol/index.ts';
import type { Sql } from '../db/open.ts';
import { CallRefused, CallUnauthenticated } from '../errors.ts';
import { sha256Hex } from '../hash.ts';
import { AuditLog, type AuditEntry } from '../store/audit-log.ts';
import type { Principal } from '../store/credentials.ts';
import { defaultTokenDays, MemberStore, type Actor, type RedeemOutcome } from '../store/members.ts';
import { auditActorOf } from './audit.ts';
import type { ServiceStores } from './stores.ts';
import type { CallContext, Implementations } from './types.ts';

export type MembersPath =
  | 'svc/members/public/whoami'
  | 'svc/members/action/redeem_invite/run'
  | 'svc/members/private/add'
  | 'svc/members/private/invite'
  | 'svc/members/private/list'
  | 'svc/members/private/remove'
  | 'svc/members/private/role'
  | 'svc/members/private/revoke_token'
  | 'svc/members/public/renew_token';

/**
 * The member functions (issue 48). Nobody, operators included, ever sees another member's token: an operator makes
 * an invite, the member redeems it for a token that only their answer carries. Each change is one transaction that
 * bumps the members' epoch and writes its audit event, and is answered only once this process uses the new list.
 */
export function memberFunctions({
  db,
  membersChanged,
  selfRenew = true,
}: ServiceStores): Implementations<MembersPath> {
  /** A change of the members and its audit event, then this process's list read again before the caller hears. */
  const changing = async <T>(
    ctx: CallContext,
    work: (members: MemberStore, audit: (entry: Omit<AuditEntry, 'traceId'>) => Promise<void>) => Promise<T>,
  ): Promise<T> => {
    const value = await db.transaction((sql) =>
      work(new MemberStore(sql), (entry) => audited(sql, ctx, entry)),
    );
    await membersChanged();
    return value;
  };
  const inviteAnswer = (
    member: { name: string; role: Role },
    made: { invite: string; expiresAt: string },
  ) => ({
    member: member.name,
    role: member.role,
    invite: made.invite,
    expires_at: made.expiresAt,
  });

  return {
    'svc/members/public/whoami': (_args, ctx) => {
      const member = principalOf(ctx);
      return {
        member: member.name,
        member_id: member.memberId,
        role: member.level,
        shared: member.shared,
        token: member.tokenId === null ? null : `${TOKEN_PREFIXES.member}_${member.tokenId}`,
        label: member.label,
        expires_at: member.expiresAt,
        issued_at: member.issuedAt,
      };
    },

    'svc/members/public/renew_token': (_args, ctx) => {
      const member = principalOf(ctx);
      if (member.tokenId === null)
        throw new CallRefused(
          'The shared tokens do not expire, and are not renewed: only a member token (fsm_…) is.',
        );
      if (!selfRenew)
        throw new CallRefused(
          `This service does not renew tokens (its operator runs \`serve --no-self-renew\`): ${member.name}'s token ends on ${(member.expiresAt ?? '').slice(0, 10)}; ask an operator for a new invite before then.`,
          { self_renew: false },
        );
      const tokenId = member.tokenId;
      return changing(ctx, async (members, audit) => {
        const renewed = await members.renew(tokenId);
        const replaces = tokenLabel('member', tokenId);
        await audit({
          action: 'token_renewed',
          target: tokenLabel('member', renewed.tokenId),
          detail: { member: renewed.member, replaces, label: renewed.label, expires_at: renewed.expiresAt },
        });
        return {
          member: renewed.member,
          role: renewed.role,
          token: renewed.token,
          token_id: `${TOKEN_PREFIXES.member}_${renewed.tokenId}`,
          label: renewed.label,
          expires_at: renewed.expiresAt,
          replaces: `${TOKEN_PREFIXES.member}_${tokenId}`,
          replaced_expires_at: renewed.oldExpiresAt,
        };
      });
    },

    'svc/members/action/redeem_invite/run': async (args, ctx) => {
      const parsed = ctx.invite === null ? null : parseToken(ctx.invite);
      if (!parsed?.ok || parsed.kind !== 'invite')
        throw new CallUnauthenticated('redeem_invite takes an invite (fsi_…) as its credential.');
      const invite = tokenLabel('invite', parsed.id);
      // Committed whether it redeems or not: a wrong secret counts toward voiding the invite.
      const outcome = await db.transaction(async (sql) => {
        const redeemed = await new MemberStore(sql).redeem(parsed.id, sha256Hex(ctx.invite!), args.label);
        const log = new AuditLog(sql);
        if (redeemed.ok)
          await log.append(
            { memberId: redeemed.memberId, tokenId: redeemed.tokenId },
            {
              action: 'invite_redeemed',
              target: redeemed.member,
              detail: { invite, token: tokenLabel('member', redeemed.tokenId), label: args.label },
              traceId: ctx.traceId,
            },
          );
        else if (redeemed.voidedNow)
          await log.append(
            { system: true },
            {
              action: 'invite_voided',
              target: invite,
              detail: { why: 'wrong secrets' },
              traceId: ctx.traceId,
            },
          );
        return redeemed;
      });
      if (!outcome.ok) throw inviteRefusal(outcome);
      await membersChanged();
      return {
        member: outcome.member,
        role: outcome.role,
        token: outcome.token,
        token_id: `${TOKEN_PREFIXES.member}_${outcome.tokenId}`,
        expires_at: outcome.expiresAt,
      };
    },

    'svc/members/private/add': (args, ctx) =>
      changing(ctx, async (members, audit) => {
        const member = await members.add(args.name, args.role, actorOf(ctx));
        const made = await members.invite(
          member,
          args.token_days ?? defaultTokenDays(member.role),
          actorOf(ctx),
        );
        await audit({
          action: 'member_added',
          target: member.name,
          detail: { role: member.role, invite: tokenLabel('invite', made.id), expires_at: made.expiresAt },
        });
        return inviteAnswer(member, made);
      }),

    'svc/members/private/invite': (args, ctx) =>
      changing(ctx, async (members, audit) => {
        const member = await members.active(args.name);
        const made = await members.invite(member, defaultTokenDays(member.role), actorOf(ctx));
        await audit({
          action: 'invite_created',
          target: member.name,
          detail: { invite: tokenLabel('invite', made.id), expires_at: made.expiresAt },
        });
        return inviteAnswer(member, made);
      }),

    'svc/members/private/list': () =>
      db.read(async (sql) => ({ members: await new MemberStore(sql).list() })),

    'svc/members/private/remove': (args, ctx) =>
      changing(ctx, async (members, audit) => {
        const removed = await members.remove(args.name, actorOf(ctx));
        await audit({
          action: 'member_removed',
          target: removed.member,
          detail: { tokens_revoked: removed.tokensRevoked },
        });
        return { member: removed.member, tokens_revoked: removed.tokensRevoked };
      }),

    'svc/members/private/role': (args, ctx) =>
      changing(ctx, async (members, audit) => {
        const changed = await members.setRole(args.name, args.role);
        await audit({
          action: 'role_changed',
          target: changed.member,
          detail: { from: changed.was, to: changed.role },
        });
        return changed;
      }),

    'svc/members/private/revoke_token': (args, ctx) =>
      changing(ctx, async (members, audit) => {
        const revoked = await members.revokeToken(tokenIdOf(args.token_id), actorOf(ctx));
        const token = `${TOKEN_PREFIXES.member}_${revoked.tokenId}`;
        await audit({ action: 'token_revoked', target: token, detail: { member: revoked.member } });
        return { token_id: token, member: revoked.member };
      }),
  };
}

/** An event of this call in the audit log, in the transaction of its change. */
function audited(sql: Sql, ctx: CallContext, entry: Omit<AuditEntry, 'traceId'>): Promise<void> {
  return new AuditLog(sql).append(auditActorOf(ctx), { ...entry, traceId: ctx.traceId });
}

function principalOf(ctx: CallContext): Principal {
  if (!ctx.member) throw new Error('a member function was admitted without a member');
  return ctx.member;
}

function actorOf(ctx: CallContext): Actor {
  return { memberId: principalOf(ctx).memberId };
}

/** A token's id as a person may give it: `fsm_3kT9xQ2mB7…`, `fsm_3kT9xQ2mB7`, or the id alone. */
export function tokenIdOf(given: string): string {
  const id = given
    .trim()
    .replace(/^fsm_/, '')
    .replace(/(…|\.\.\.)$/, '');
  if (!/^[0-9A-Za-z]{10}$/.test(id))
    throw new CallRefused(`"${given.slice(0, 80)}" is not a token id: \`member list\` shows them (fsm_…).`, {
      path: ['token_id'],
    });
  return id;
}

function inviteRefusal(outcome: Extract<RedeemOutcome, { ok: false }>): CallUnauthenticated {
  const ask = 'Ask an operator for a new one (`flowsync service member invite <name>`).';
  switch (outcome.why) {
    case 'used':
      return new CallUnauthenticated(
        `This invite was already used, at ${outcome.at}: it works once. If that was not you, tell an operator. ${ask}`,
        { invite: 'used', at: outcome.at },
      );
    case 'expired':
      return new CallUnauthenticated(`This invite expired at ${outcome.at}. ${ask}`, {
        invite: 'expired',
        at: outcome.at,
      });
    case 'voided':
      return new CallUnauthenticated(`This invite was voided at ${outcome.at}. ${ask}`, {
        invite: 'voided',
        at: outcome.at,
      });
    default:
      return new CallUnauthenticated(`Unknown invite: check it was copied whole. ${ask}`, {
        invite: 'unknown',
      });
  }
}
