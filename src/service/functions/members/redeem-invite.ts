import {
  parseToken,
  tokenLabel,
  TOKEN_PREFIXES,
  type ParsedArgsOf,
  type ValueOf,
} from '../../../protocol/index.ts';
import { CallUnauthenticated } from '../../errors.ts';
import { sha256Hex } from '../../hash.ts';
import { AuditLog } from '../../store/audit-log.ts';
import { MemberStore, type RedeemOutcome } from '../../store/members.ts';
import type { CallContext, Implementations } from '../types.ts';
import type { MemberCalls } from './changes.ts';

/** An invite, given as the credential, traded once for the member's own token. */
export function redeemInvite(calls: MemberCalls): Implementations<'svc/members/action/redeem_invite/run'> {
  return {
    'svc/members/action/redeem_invite/run': (args, ctx) => redeem(calls, args, ctx),
  };
}

async function redeem(
  { db, membersChanged }: MemberCalls,
  args: ParsedArgsOf<'svc/members/action/redeem_invite/run'>,
  ctx: CallContext,
): Promise<ValueOf<'svc/members/action/redeem_invite/run'>> {
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
